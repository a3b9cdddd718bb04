package guest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

type bigIn struct {
	Text  string            `json:"text"`
	More  []string          `json:"more,omitempty"`
	Ptr   *string           `json:"ptr,omitempty"`
	Map   map[string]string `json:"map,omitempty"`
	Any   any               `json:"any,omitempty"`
	Inner struct {
		Deep string `json:"deep"`
	} `json:"inner,omitempty"`
	N int `json:"n,omitempty"`
}

func TestDecodeBigMatchesEncodingJSON(t *testing.T) {
	big := strings.Repeat("x", bigString) + "\\n\\u00e9\\ud83d\\ude00\\\"" + strings.Repeat("é", 10)
	docs := []string{
		`{"text":"` + big + `","n":3}`,
		`{"more":["a","` + big + `","` + big + `1"],"ptr":"` + big + `2"}`,
		`{"map":{"k":"` + big + `"},"any":{"x":["` + big + `"]},"inner":{"deep":"` + big + `"}}`,
		`{"any":"` + big + `","TEXT":"` + big + `"}`,
		`{"text":"` + big + "\xff" + `"}`,
		`{"n":"` + big + `"}`,
	}
	for _, doc := range docs {
		var want bigIn
		werr := json.Unmarshal([]byte(doc), &want)
		var got bigIn
		done, err := decodeBig([]byte(doc), &got, nil)
		if !done {
			t.Fatalf("decodeBig(%.40q…) did nothing", doc)
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("decodeBig(%.40q…): err %v; encoding/json: %v", doc, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("decodeBig(%.40q…) differs from encoding/json", doc)
		}
	}
	var raw struct {
		B []byte `json:"b"`
	}
	if done, _ := decodeBig([]byte(`{"b":"`+strings.Repeat("QUJD", bigString)+`"}`), &raw, nil); done {
		t.Errorf("decodeBig into []byte: done; want encoding/json to decode base64")
	}
}

// TestDispatchBigArguments checks the whole path: the envelope's scan
// finds the big strings and decodeBig uses them without another scan.
func TestDispatchBigArguments(t *testing.T) {
	useRegistry(t)
	var got bigIn
	AddTool(Tool{Name: "big"}, func(_ *Context, in bigIn) (*Result, error) {
		got = in
		return TextResult(in.Text), nil
	})
	big := strings.Repeat("y", bigString) + `\n\"é`
	args := `{"text":"` + big + `","more":["` + big + `2"],"map":{"k":"` + big + `3"},"n":7}`
	out, err := Dispatch(abi.ExportCallTool, []byte(`{"context":{"_meta":{"k":"`+big+`"}},"request":{"name":"big","arguments":`+args+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := &Context{}
	p, ok := decodeInputFast[abi.CallToolParams](ctx, []byte(`{"request":{"name":"big","arguments":`+args+`}}`))
	if known := ctx.bigArgs(p.Arguments); !ok || known == nil || len(*known) != 3 {
		t.Errorf("big strings found by the envelope's scan: %v; want 3", known)
	}
	var want bigIn
	if err := json.Unmarshal([]byte(args), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handler got %.60q…; want %.60q…", got.Text, want.Text)
	}
	var res abi.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != want.Text {
		t.Errorf("output %.80s: %v; want the text back", out, err)
	}
}

func TestDecodeInputFast(t *testing.T) {
	for _, in := range []string{
		`{"request":{"name":"t","arguments":{"a":1},"_meta":{"k":2}},"context":{"id":1,"protocolVersion":"v"}}`,
		`{"context":{},"request":{"name":"t"}}`,
		`{"request":null}`,
		`{"request":{"name":"t","arguments":null}}`,
		`{"request":{"name":"t\u00e9\"x","arguments":{}}}`, // an escaped name goes through encoding/json
		`{"request":{"name":"é"}}`,
		`{"request":{"name":"bad` + "\xff" + `"}}`,
		`{"request":{"name":null}}`,
		`{"context":{"ID":1,"Plugin":"p"},"request":{"name":"t"}}`,
	} {
		var slow struct {
			Request *abi.CallToolParams `json:"request"`
			Context abi.Context         `json:"context"`
		}
		if err := json.Unmarshal([]byte(in), &slow); err != nil {
			t.Fatal(err)
		}
		ctx := &Context{}
		got, ok := decodeInputFast[abi.CallToolParams](ctx, []byte(in))
		if !ok {
			t.Fatalf("decodeInputFast(%s): not ok", in)
		}
		if !reflect.DeepEqual(got, slow.Request) || !reflect.DeepEqual(ctx.Context, slow.Context) {
			t.Errorf("decodeInputFast(%s) = %+v, %+v; want %+v, %+v", in, got, ctx.Context, slow.Request, slow.Context)
		}
	}
	for _, in := range []string{``, `[]`, `{"Request":{}}`, `{"request":{},"request":{}}`, `{"request":{"NAME":"x"}}`, `{"request":{"name":1}}`, `{"request":{`,
		`{"request":{"n\u0061me":"x"}}`, `{"request\u0000":{}}`} {
		if _, ok := decodeInputFast[abi.CallToolParams](&Context{}, []byte(in)); ok {
			t.Errorf("decodeInputFast(%s): ok; want the encoding/json path", in)
		}
	}
}

func TestAppendCallToolResult(t *testing.T) {
	size := int64(3)
	for _, r := range []*abi.CallToolResult{
		{Content: []abi.Content{}},
		{Content: []abi.Content{abi.TextContent("a\"b"), {Type: abi.ContentImage, Data: "AAA=", MimeType: "image/png"},
			{Type: abi.ContentResourceLink, URI: "x://y", Name: "n", Size: &size}}, IsError: true},
		{Content: []abi.Content{abi.TextContent("{}")}, StructuredContent: json.RawMessage(`{"a": [1, 2]}`), Meta: json.RawMessage(`{"m":1}`)},
	} {
		got, err := appendCallToolResult(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(r)
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("appendCallToolResult = %s; want %s", got, want)
		}
	}
	if _, err := appendCallToolResult(nil, &abi.CallToolResult{StructuredContent: json.RawMessage(`{bad`)}); err == nil {
		t.Error("invalid structuredContent: no error")
	}
}

// normalizeContext lets nil and empty raw members compare equal.
func normalizeContext(c abi.Context) abi.Context {
	if len(c.ID) == 0 {
		c.ID = nil
	}
	if len(c.Meta) == 0 {
		c.Meta = nil
	}
	return c
}
