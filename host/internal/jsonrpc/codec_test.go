package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		in       string
		kind     Kind
		code     int // 0: no error
		id       string
		method   string
		params   string
		serverID string
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: KindRequest, id: `1`, method: "ping"},
		{in: `{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":[1]}}`, kind: KindRequest, id: `"a"`, method: "x", params: `{"k":[1]}`},
		{in: ` { "id" : 12345678901234567890123 , "method" : "m" , "jsonrpc" : "2.0" } `, kind: KindRequest, id: `12345678901234567890123`, method: "m"},
		{in: `{"jsonrpc":"2.0","id":-0.5e-3,"method":"m"}`, kind: KindRequest, id: `-0.5e-3`, method: "m"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, kind: KindRequest, id: `1`, method: "m"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"t\u006fols/list"}`, kind: KindRequest, id: `1`, method: "tools/list"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","server_id":"p"}`, kind: KindRequest, id: `1`, method: "m", serverID: `"p"`},
		{in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: KindNotification, method: "notifications/initialized"},
		{in: `{"jsonrpc":"2.0","id":7,"result":{}}`, kind: KindResponse, id: `7`},
		{in: `{"jsonrpc":"2.0","id":"s","error":{"code":1,"message":"m"}}`, kind: KindResponse, id: `"s"`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, kind: KindRequest, id: `1`, method: "b"},

		{in: ``, code: CodeParseError},
		{in: `{`, code: CodeParseError},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m"} x`, code: CodeParseError},
		{in: `{"jsonrpc":"2.0","id":01,"method":"m"}`, code: CodeParseError},
		{in: `{"a":"\x"}`, code: CodeParseError},
		{in: "{\"a\":\"\t\"}", code: CodeParseError},
		{in: `nul`, code: CodeParseError},

		{in: `[]`, code: CodeInvalidRequest},
		{in: `null`, code: CodeInvalidRequest},
		{in: `{}`, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0"}`, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":1}`, kind: KindInvalid, code: CodeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":2,"id":1,"method":"m"}`, kind: KindRequest, code: CodeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":"2.0","id":null,"method":"m"}`, kind: KindRequest, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":true,"method":"m"}`, kind: KindRequest, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":{},"method":"m"}`, kind: KindRequest, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":[],"method":"m"}`, kind: KindRequest, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":1,"method":1}`, kind: KindRequest, code: CodeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, kind: KindRequest, code: CodeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","server_id":3}`, kind: KindRequest, code: CodeInvalidRequest, id: `1`},
		{in: `{"method":"notifications/initialized"}`, kind: KindNotification, code: CodeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, kind: KindResponse, code: CodeInvalidRequest, id: `1`},
	}
	for _, tt := range tests {
		msg, err := Decode([]byte(tt.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if code != tt.code {
			t.Errorf("decode(%s): got code %d (%v); want %d", tt.in, code, err, tt.code)
			continue
		}
		if msg.Kind != tt.kind || string(msg.ID) != tt.id {
			t.Errorf("decode(%s): got kind %d id %q; want kind %d id %q", tt.in, msg.Kind, msg.ID, tt.kind, tt.id)
		}
		if err == nil && (string(msg.Method) != tt.method || string(msg.Params) != tt.params || string(msg.ServerID) != tt.serverID) {
			t.Errorf("decode(%s): got method %q params %q server_id %q; want %q %q %q", tt.in,
				msg.Method, msg.Params, msg.ServerID, tt.method, tt.params, tt.serverID)
		}
	}
}

func TestSplitBatch(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		code int
	}{
		{`[{"a":1}, 2 ,"x"]`, 3, 0},
		{`[ ]`, 0, CodeInvalidRequest},
		{`[1,`, 0, CodeParseError},
		{`[1] [2]`, 0, CodeParseError},
	}
	for _, tt := range tests {
		elems, err := SplitBatch([]byte(tt.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if len(elems) != tt.n || code != tt.code {
			t.Errorf("splitBatch(%s): got %d elements, code %d; want %d, %d", tt.in, len(elems), code, tt.n, tt.code)
		}
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{string(AppendResponse(nil, []byte(`"x"`), []byte(`{}`))), `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{string(AppendError(nil, nil, &Error{Code: -32700, Message: "bad \"line\"\n"})),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"line\"\n"}}`},
		{string(AppendError(nil, []byte(`9`), &Error{Code: -32002, Message: "m", Data: map[string]string{"uri": "u"}})),
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"m","data":{"uri":"u"}}}`},
		{string(AppendNotification(nil, "notifications/tools/list_changed", nil)),
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{string(AppendRequest(nil, []byte(`3`), "roots/list", []byte(`{}`))),
			`{"jsonrpc":"2.0","id":3,"method":"roots/list","params":{}}`},
		{string(CompactLine([]byte("{\"a\":\n [1,\r\n2]}"))), `{"a":[1,2]}`},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %s; want %s", i, tt.got, tt.want)
		}
	}
}

// FuzzDecode: arbitrary bytes never panic; the result is either a valid
// message or a typed error, and -32700 means exactly "not JSON".
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"b":[1,2.5e3,null,true]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":[2]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1],"params":{"a":{"b":"c"},"a":2}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"a":"\u00e9\ud83d\ude00"}`, `{`, `"x"`, `-0.1e+5`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if IsBatch(b) {
			elems, err := SplitBatch(b)
			if err == nil && len(elems) == 0 {
				t.Fatalf("splitBatch(%q): no error and no elements", b)
			}
			return
		}
		msg, err := Decode(b)
		if err != nil {
			if err.Code != CodeParseError && err.Code != CodeInvalidRequest {
				t.Fatalf("decode(%q): untyped error code %d", b, err.Code)
			}
			if (err.Code == CodeParseError) == json.Valid(b) {
				t.Fatalf("decode(%q): code %d but json.Valid = %v", b, err.Code, json.Valid(b))
			}
			return
		}
		// The members read with the message are those of params.
		var read, walked [][2][]byte
		for i := range msg.ParamMembers.Len() {
			k, v := msg.ParamMembers.At(i)
			read = append(read, [2][]byte{k, v})
		}
		if len(msg.Params) > 0 && msg.Params[0] == '{' {
			EachMember(msg.Params, func(k, v []byte) bool {
				walked = append(walked, [2][]byte{k, v})
				return true
			})
		}
		if !slices.EqualFunc(read, walked, func(a, b [2][]byte) bool {
			return bytes.Equal(a[0], b[0]) && bytes.Equal(a[1], b[1])
		}) {
			t.Fatalf("decode(%q): ParamMembers %q; walking params gives %q", b, read, walked)
		}
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		if json.Unmarshal(b, &env) != nil {
			t.Fatalf("decode(%q) accepted what encoding/json rejects", b)
		}
		switch msg.Kind {
		case KindRequest:
			if msg.ID == nil || msg.Method == nil {
				t.Fatalf("decode(%q): request without id or method", b)
			}
		case KindNotification:
			if msg.ID != nil || msg.Method == nil {
				t.Fatalf("decode(%q): notification with id or without method", b)
			}
		case KindResponse:
			if msg.ID == nil || (msg.Result == nil) == (msg.Error == nil) {
				t.Fatalf("decode(%q): malformed response accepted", b)
			}
		default:
			t.Fatalf("decode(%q): no error and kind %d", b, msg.Kind)
		}
		if msg.ID != nil && !json.Valid(msg.ID) {
			t.Fatalf("decode(%q): id %q is not JSON", b, msg.ID)
		}
		// Whatever we send back about it must be one valid JSON line.
		out := AppendError(nil, msg.ID, &Error{Code: 1, Message: string(msg.Method)})
		if !json.Valid(out) {
			t.Fatalf("reply to %q is not JSON: %s", b, out)
		}
	})
}

// TestParamMembers: params' members are read with the message, in order,
// repeated keys included (Get returns the last, as encoding/json keeps).
func TestParamMembers(t *testing.T) {
	tests := []struct {
		in   string
		want []string // key=value
		get  map[string]string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"msg":"x"},"_meta":{"progressToken":1}}}`,
			[]string{`name="echo"`, `arguments={"msg":"x"}`, `_meta={"progressToken":1}`},
			map[string]string{"name": `"echo"`, "arguments": `{"msg":"x"}`, "missing": ""}},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{ "a" : 1 , "a":2 }}`, []string{`a=1`, `a=2`}, map[string]string{"a": "2"}},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`, nil, map[string]string{"a": ""}},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}`, nil, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, nil, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":{"b":2}}`, []string{`b=2`}, map[string]string{"a": "", "b": "2"}},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":[2]}`, nil, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"m"}`, nil, nil},
		// More members than the value holds inline.
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"a":6,"f\u0067":7}}`,
			[]string{`a=1`, `b=2`, `c=3`, `d=4`, `e=5`, `a=6`, `f\u0067=7`},
			map[string]string{"a": "6", "d": "4", "e": "5", "fg": "7", "g": ""}},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6},"params":{"x":0}}`,
			[]string{`x=0`}, map[string]string{"x": "0", "e": "", "f": ""}},
	}
	for _, tt := range tests {
		msg, err := Decode([]byte(tt.in))
		if err != nil && len(tt.want) > 0 {
			t.Fatalf("Decode(%s): %v", tt.in, err)
		}
		var got []string
		for i := range msg.ParamMembers.Len() {
			k, v := msg.ParamMembers.At(i)
			got = append(got, string(k)+"="+string(v))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Decode(%s).ParamMembers = %q; want %q", tt.in, got, tt.want)
		}
		for k, v := range tt.get {
			if g := string(msg.ParamMembers.Get(k)); g != v {
				t.Errorf("Decode(%s).ParamMembers.Get(%q) = %q; want %q", tt.in, k, g, v)
			}
		}
	}
	// Too deep inside params is as invalid as anywhere else.
	deep := `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth) + `}}`
	if _, err := Decode([]byte(deep)); err == nil || err.Code != CodeParseError {
		t.Errorf("params nested past MaxDepth: got %v; want a parse error", err)
	}
}
