package extism

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestToolResult: one pass over a CallToolResult checks its shape and
// finds isError and structuredContent, the last of duplicates (as
// encoding/json picks), under escaped keys too.
func TestToolResult(t *testing.T) {
	for _, tt := range []struct {
		name, out  string
		isError    bool
		structured string // "" for absent
		msg        string
	}{
		{"plain", `{"content":[{"type":"text","text":"hi"}]}`, false, "", ""},
		{"error", `{"content":[],"isError":true}`, true, "", ""},
		{"isError false", `{"content":[],"isError":false}`, false, "", ""},
		{"isError not a boolean", `{"content":[],"isError":"true"}`, false, "", ""},
		{"structured", `{"content":[],"structuredContent":{"n":1}}`, false, `{"n":1}`, ""},
		{"structured null", `{"content":[],"structuredContent":null}`, false, `null`, ""},
		{"duplicates: the last", `{"isError":true,"content":[],"structuredContent":{"a":1},"isError":false,"structuredContent":{"b":2}}`, false, `{"b":2}`, ""},
		{"escaped keys", `{"cont\u0065nt":[],"is\u0045rror":true,"structured\u0043ontent":{"x":[1]}}`, true, `{"x":[1]}`, ""},
		{"space around", " \n{ \"content\" : [ ] , \"isError\" : true }\n", true, "", ""},
		{"missing content", `{"isError":true}`, false, "", `missing "content"`},
		{"content not an array", `{"content":{}}`, false, "", `"content" is not an array`},
		{"not an object", `[1]`, false, "", `not a JSON object: "[1]"`},
		{"null", `null`, false, "", `not a JSON object: null`},
		{"invalid", `{"content":[}`, false, "", `invalid JSON: "{\"content\":[}"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, msg := ReadToolResult([]byte(tt.out))
			if msg != tt.msg {
				t.Fatalf("message %q; want %q", msg, tt.msg)
			}
			if msg != "" {
				if r.JSON != nil || r.IsError || r.Structured != nil {
					t.Errorf("a refused output gave %+v; want the zero ToolResult", r)
				}
				return
			}
			if string(r.JSON) != tt.out || r.IsError != tt.isError || string(r.Structured) != tt.structured {
				t.Errorf("got JSON %s, isError %v, structured %q; want isError %v, structured %q",
					r.JSON, r.IsError, r.Structured, tt.isError, tt.structured)
			}
			if got := checkShape([]byte(tt.out), "content", '['); got != "" {
				t.Errorf("checkShape refused what toolResult accepted: %s", got)
			}
		})
	}
}

// FuzzToolResult checks toolResult against encoding/json: it accepts
// exactly the objects whose "content" is an array, and finds the same
// isError and structuredContent.
func FuzzToolResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}],"isError":true}`,
		`{"content":[],"structuredContent":{"n":1},"structuredContent":[2]}`,
		`{"cont\u0065nt":[],"is\u0045rror":true}`,
		`{"content":"x"}`, `[]`, `null`, `{"content":[}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		r, msg := ReadToolResult(out)
		var m map[string]json.RawMessage
		jerr := json.Unmarshal(out, &m)
		content, ok := m["content"]
		content = bytes.TrimSpace(content)
		want := jerr == nil && m != nil && ok && len(content) > 0 && content[0] == '['
		if (msg == "") != want {
			t.Fatalf("ReadToolResult(%q): message %q; encoding/json says valid object with a content array: %v (%v)", out, msg, want, jerr)
		}
		if msg != "" {
			return
		}
		if isErr := string(bytes.TrimSpace(m["isError"])) == "true"; r.IsError != isErr {
			t.Errorf("ReadToolResult(%q): isError %v; encoding/json finds %v", out, r.IsError, isErr)
		}
		if s, ok := m["structuredContent"]; ok != (r.Structured != nil) || ok && !bytes.Equal(bytes.TrimSpace(s), r.Structured) {
			t.Errorf("ReadToolResult(%q): structuredContent %q; encoding/json finds %q (present %v)", out, r.Structured, s, ok)
		}
	})
}
