package guest

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

func TestContentJSON(t *testing.T) {
	size := int64(12)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"text", Text("hi"), `{"type":"text","text":"hi"}`},
		{"empty text", Text(""), `{"type":"text","text":""}`},
		{"image", Image([]byte{1, 2, 3}, "image/png"), `{"type":"image","data":"AQID","mimeType":"image/png"}`},
		{"image b64", ImageBase64("AQID", "image/gif"), `{"type":"image","data":"AQID","mimeType":"image/gif"}`},
		{"audio", Audio([]byte("RIFF"), "audio/wav"), `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`},
		{"audio b64", AudioBase64("UklGRg==", "audio/wav"), `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`},
		{"link", ResourceLink(abi.Resource{URI: "file:///a.txt", Name: "a.txt", MimeType: "text/plain", Size: &size}),
			`{"type":"resource_link","mimeType":"text/plain","uri":"file:///a.txt","name":"a.txt","size":12}`},
		{"embedded text", EmbeddedText("test://x", "text/plain", "body"),
			`{"type":"resource","resource":{"uri":"test://x","mimeType":"text/plain","text":"body"}}`},
		{"embedded blob", EmbeddedBlob("test://y", "application/octet-stream", []byte{0xff}),
			`{"type":"resource","resource":{"uri":"test://y","mimeType":"application/octet-stream","blob":"/w=="}}`},
		{"result", NewResult(Text("a"), Text("b")), `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		{"empty result", NewResult(), `{"content":[]}`},
		{"text result", TextResult("x"), `{"content":[{"type":"text","text":"x"}]}`},
		{"error", Error("bad"), `{"content":[{"type":"text","text":"bad"}],"isError":true}`},
		{"errorf", Errorf("bad %d", 7), `{"content":[{"type":"text","text":"bad 7"}],"isError":true}`},
		{"user message", UserMessage(Text("q")), `{"role":"user","content":{"type":"text","text":"q"}}`},
		{"assistant message", AssistantMessage(Text("a")), `{"role":"assistant","content":{"type":"text","text":"a"}}`},
		{"text resource", TextResource("u://", "text/plain", "t"), `{"contents":[{"uri":"u://","mimeType":"text/plain","text":"t"}]}`},
		{"blob resource", BlobResource("u://", "image/png", []byte("png")), `{"contents":[{"uri":"u://","mimeType":"image/png","blob":"cG5n"}]}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestJSONResult(t *testing.T) {
	tests := []struct {
		v          any
		text       string
		structured string
	}{
		{map[string]int{"a": 1}, `{"a":1}`, `{"a":1}`},
		{struct {
			B string `json:"b"`
		}{"x"}, `{"b":"x"}`, `{"b":"x"}`},
		{[]int{1, 2}, `[1,2]`, ``}, // structuredContent must be an object
		{"s", `"s"`, ``},
	}
	for _, tt := range tests {
		r, err := JSON(tt.v)
		if err != nil {
			t.Errorf("JSON(%v): %v", tt.v, err)
			continue
		}
		if r.Content[0].Text != tt.text || string(r.StructuredContent) != tt.structured {
			t.Errorf("JSON(%v) = text %s, structured %s; want %s, %s", tt.v, r.Content[0].Text, r.StructuredContent, tt.text, tt.structured)
		}
	}
	if _, err := JSON(func() {}); err == nil {
		t.Errorf("JSON(func) error = nil; want an encoding error")
	}
}

func TestFilterPrefix(t *testing.T) {
	got := FilterPrefix([]string{"Alpha", "alpine", "beta"}, "AL")
	if len(got) != 2 || got[0] != "Alpha" || got[1] != "alpine" {
		t.Errorf("FilterPrefix = %v; want [Alpha alpine]", got)
	}
	if got := FilterPrefix(nil, "x"); got == nil || len(got) != 0 {
		t.Errorf("FilterPrefix(nil) = %#v; want an empty, non-nil slice", got)
	}
}

// TestOneBlockResults: TextResult and Error allocate their result and its
// one block together (once a call, which counts inside Wasm), and the
// result behaves as one built by hand: appending to its Content copies.
func TestOneBlockResults(t *testing.T) {
	var sink *Result
	for name, f := range map[string]func(string) *Result{"TextResult": TextResult, "Error": Error} {
		if n := testing.AllocsPerRun(100, func() { sink = f("x") }); n != 1 {
			t.Errorf("%s: %v allocations; want 1", name, n)
		}
		a := f("a")
		b := *a
		b.Content = append(b.Content, Text("b"))
		if len(a.Content) != 1 || a.Content[0].Text != "a" || len(b.Content) != 2 || b.Content[0].Text != "a" {
			t.Errorf("%s: after appending to a copy: %+v and %+v", name, a.Content, b.Content)
		}
		b.Content[0].Text = "changed"
		if a.Content[0].Text != "a" {
			t.Errorf("%s: appending to a copy aliased the original's block", name)
		}
	}
	_ = sink
}
