package host

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		in       string
		kind     msgKind
		code     int // 0: no error
		id       string
		method   string
		params   string
		serverID string
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: kindRequest, id: `1`, method: "ping"},
		{in: `{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":[1]}}`, kind: kindRequest, id: `"a"`, method: "x", params: `{"k":[1]}`},
		{in: ` { "id" : 12345678901234567890123 , "method" : "m" , "jsonrpc" : "2.0" } `, kind: kindRequest, id: `12345678901234567890123`, method: "m"},
		{in: `{"jsonrpc":"2.0","id":-0.5e-3,"method":"m"}`, kind: kindRequest, id: `-0.5e-3`, method: "m"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, kind: kindRequest, id: `1`, method: "m"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"t\u006fols/list"}`, kind: kindRequest, id: `1`, method: "tools/list"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","server_id":"p"}`, kind: kindRequest, id: `1`, method: "m", serverID: `"p"`},
		{in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: kindNotification, method: "notifications/initialized"},
		{in: `{"jsonrpc":"2.0","id":7,"result":{}}`, kind: kindResponse, id: `7`},
		{in: `{"jsonrpc":"2.0","id":"s","error":{"code":1,"message":"m"}}`, kind: kindResponse, id: `"s"`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, kind: kindRequest, id: `1`, method: "b"},

		{in: ``, code: codeParseError},
		{in: `{`, code: codeParseError},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m"} x`, code: codeParseError},
		{in: `{"jsonrpc":"2.0","id":01,"method":"m"}`, code: codeParseError},
		{in: `{"a":"\x"}`, code: codeParseError},
		{in: "{\"a\":\"\t\"}", code: codeParseError},
		{in: `nul`, code: codeParseError},

		{in: `[]`, code: codeInvalidRequest},
		{in: `null`, code: codeInvalidRequest},
		{in: `{}`, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0"}`, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":1}`, kind: kindInvalid, code: codeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":2,"id":1,"method":"m"}`, kind: kindRequest, code: codeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":"2.0","id":null,"method":"m"}`, kind: kindRequest, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":true,"method":"m"}`, kind: kindRequest, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":{},"method":"m"}`, kind: kindRequest, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":[],"method":"m"}`, kind: kindRequest, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":1,"method":1}`, kind: kindRequest, code: codeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, kind: kindRequest, code: codeInvalidRequest, id: `1`},
		{in: `{"jsonrpc":"2.0","id":1,"method":"m","server_id":3}`, kind: kindRequest, code: codeInvalidRequest, id: `1`},
		{in: `{"method":"notifications/initialized"}`, kind: kindNotification, code: codeInvalidRequest},
		{in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, kind: kindResponse, code: codeInvalidRequest, id: `1`},
	}
	for _, tt := range tests {
		msg, err := decode([]byte(tt.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if code != tt.code {
			t.Errorf("decode(%s): got code %d (%v); want %d", tt.in, code, err, tt.code)
			continue
		}
		if msg.kind != tt.kind || string(msg.id) != tt.id {
			t.Errorf("decode(%s): got kind %d id %q; want kind %d id %q", tt.in, msg.kind, msg.id, tt.kind, tt.id)
		}
		if err == nil && (string(msg.method) != tt.method || string(msg.params) != tt.params || string(msg.serverID) != tt.serverID) {
			t.Errorf("decode(%s): got method %q params %q server_id %q; want %q %q %q", tt.in,
				msg.method, msg.params, msg.serverID, tt.method, tt.params, tt.serverID)
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
		{`[ ]`, 0, codeInvalidRequest},
		{`[1,`, 0, codeParseError},
		{`[1] [2]`, 0, codeParseError},
	}
	for _, tt := range tests {
		elems, err := splitBatch([]byte(tt.in))
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
		{string(appendResponse(nil, []byte(`"x"`), []byte(`{}`))), `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{string(appendError(nil, nil, &rpcError{Code: -32700, Message: "bad \"line\"\n"})),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"line\"\n"}}`},
		{string(appendError(nil, []byte(`9`), &rpcError{Code: -32002, Message: "m", Data: map[string]string{"uri": "u"}})),
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"m","data":{"uri":"u"}}}`},
		{string(appendNotification(nil, "notifications/tools/list_changed", nil)),
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{string(appendRequest(nil, []byte(`3`), "roots/list", []byte(`{}`))),
			`{"jsonrpc":"2.0","id":3,"method":"roots/list","params":{}}`},
		{string(compactLine([]byte("{\"a\":\n [1,\r\n2]}"))), `{"a":[1,2]}`},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %s; want %s", i, tt.got, tt.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n tab\t cr\r", "\x00\x1f\x7f", "é ☃ 😀", "bad \xff utf8", "\u2028\u2029", "<&>"} {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("appendString(%q) = %s: not JSON: %v", s, b, err)
			continue
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if got != want {
			t.Errorf("appendString(%q) round trip: got %q; want %q", s, got, want)
		}
	}
}

func TestSetMember(t *testing.T) {
	tests := []struct{ obj, want string }{
		{``, `{"progressToken":7}`},
		{`{}`, `{"progressToken":7}`},
		{`{"progress":1}`, `{"progress":1,"progressToken":7}`},
		{`{"progressToken":"x","progress":1,"progressToken":2}`, `{"progressToken":7,"progress":1}`},
		{`[1]`, `{"progressToken":7}`},
	}
	for _, tt := range tests {
		if got := string(setMember([]byte(tt.obj), "progressToken", []byte(`7`))); got != tt.want {
			t.Errorf("setMember(%s): got %s; want %s", tt.obj, got, tt.want)
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
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"a":"\u00e9\ud83d\ude00"}`, `{`, `"x"`, `-0.1e+5`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v; json.Valid says %v", b, got, want)
		}
		if isBatch(b) {
			elems, err := splitBatch(b)
			if err == nil && len(elems) == 0 {
				t.Fatalf("splitBatch(%q): no error and no elements", b)
			}
			return
		}
		msg, err := decode(b)
		if err != nil {
			if err.Code != codeParseError && err.Code != codeInvalidRequest {
				t.Fatalf("decode(%q): untyped error code %d", b, err.Code)
			}
			if (err.Code == codeParseError) == json.Valid(b) {
				t.Fatalf("decode(%q): code %d but json.Valid = %v", b, err.Code, json.Valid(b))
			}
			return
		}
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		if json.Unmarshal(b, &env) != nil {
			t.Fatalf("decode(%q) accepted what encoding/json rejects", b)
		}
		switch msg.kind {
		case kindRequest:
			if msg.id == nil || msg.method == nil {
				t.Fatalf("decode(%q): request without id or method", b)
			}
		case kindNotification:
			if msg.id != nil || msg.method == nil {
				t.Fatalf("decode(%q): notification with id or without method", b)
			}
		case kindResponse:
			if msg.id == nil || (msg.result == nil) == (msg.error == nil) {
				t.Fatalf("decode(%q): malformed response accepted", b)
			}
		default:
			t.Fatalf("decode(%q): no error and kind %d", b, msg.kind)
		}
		if msg.id != nil && !json.Valid(msg.id) {
			t.Fatalf("decode(%q): id %q is not JSON", b, msg.id)
		}
		// Whatever we send back about it must be one valid JSON line.
		out := appendError(nil, msg.id, &rpcError{Code: 1, Message: string(msg.method)})
		if !json.Valid(out) {
			t.Fatalf("reply to %q is not JSON: %s", b, out)
		}
	})
}
