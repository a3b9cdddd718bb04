package protocol

import (
	"encoding/json"
	"testing"
)

func TestFilterTool(t *testing.T) {
	const tool = `{"name":"t","title":"T","description":"d","icons":[{"src":"x"}],"inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"outputSchema":{"type":"object"},"annotations":{"title":"A"},"execution":{"taskSupport":"optional"},"_meta":{"k":1}}`
	tests := []struct {
		v    Version
		want string
	}{
		{V20241105, `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"_meta":{"k":1}}`},
		{V20250326, `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"annotations":{"title":"A"},"_meta":{"k":1}}`},
		{V20250618, `{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"outputSchema":{"type":"object"},"annotations":{"title":"A"},"_meta":{"k":1}}`},
		{V20251125, tool},
	}
	for _, tt := range tests {
		if got := string(FilterTool(nil, []byte(tool), tt.v)); got != tt.want {
			t.Errorf("FilterTool at %s:\n got  %s\n want %s", tt.v, got, tt.want)
		}
	}
}

func TestFilterCallResult(t *testing.T) {
	tests := []struct {
		v       Version
		in      string
		want    string
		sameRef bool // returned without copying
	}{
		{V20251125, mediaResult, mediaResult, true},
		{V20250618, `{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, `{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, true},
		{V20250618, `{"content":[{"type":"resource_link","uri":"u","name":"n","icons":[]}]}`, `{"content":[{"type":"resource_link","uri":"u","name":"n"}]}`, false},
		{V20250326, `{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}],"structuredContent":{"a":1},"isError":false}`,
			`{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}],"isError":false}`, false},
		{V20241105, `{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`,
			`{"content":[{"type":"text","text":"[audio content (audio/wav) omitted: protocol version 2024-11-05 cannot carry audio]"}]}`, false},
		{V20241105, `{"content":[{"type":"text","text":"the word \"audio\" alone changes nothing"}]}`,
			`{"content":[{"type":"text","text":"the word \"audio\" alone changes nothing"}]}`, true},
	}
	for _, tt := range tests {
		in := []byte(tt.in)
		got := FilterCallResult(in, tt.v)
		if string(got) != tt.want {
			t.Errorf("FilterCallResult(%s) at %s:\n got  %s\n want %s", tt.in, tt.v, got, tt.want)
		}
		if same := len(got) > 0 && &got[0] == &in[0]; same != tt.sameRef {
			t.Errorf("FilterCallResult(%s) at %s: returned input unchanged = %v; want %v", tt.in, tt.v, same, tt.sameRef)
		}
	}
}

// FuzzFilters: whatever JSON a plugin sends, every filter returns valid
// JSON at every version (a filter that broke JSON would break the stream).
func FuzzFilters(f *testing.F) {
	f.Add([]byte(mediaResult))
	f.Add([]byte(`{"name":"t","title":"x","arguments":[{"name":"a","title":"b"},3],"icons":[],"annotations":{"lastModified":"x"}}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":{"type":"resource_link","uri":"u"}},1]}`))
	f.Add([]byte(`{"content":"x","structuredContent":1}`))
	f.Add([]byte(`{"progress":1,"message":"m"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		for v := V20241105; v <= Latest; v++ {
			outs := map[string][]byte{
				"tool":     FilterTool(nil, b, v),
				"item":     FilterItem(nil, b, v),
				"prompt":   FilterPrompt(nil, b, v),
				"content":  filterContent(nil, b, v),
				"result":   FilterCallResult(b, v),
				"prompts":  FilterPromptResult(b, v),
				"progress": FilterProgress(b, v),
			}
			for name, out := range outs {
				if !json.Valid(out) {
					t.Fatalf("filter %s at %s of %s: invalid JSON %s", name, v, b, out)
				}
			}
		}
	})
}

// mediaResult is a CallToolResult with one content block of every type
// (host's fixture tool "media" returns the same).
const mediaResult = `{"content":[` +
	`{"type":"text","text":"hi","annotations":{"audience":["user"],"lastModified":"2025-01-01T00:00:00Z"}},` +
	`{"type":"image","data":"AA==","mimeType":"image/png"},` +
	`{"type":"audio","data":"AA==","mimeType":"audio/wav"},` +
	`{"type":"resource_link","uri":"test://readme","name":"readme","description":"The readme","icons":[{"src":"data:x"}]},` +
	`{"type":"resource","resource":{"uri":"test://readme","text":"Read me."}}` +
	`],"structuredContent":{"n":1},"_meta":{"m":true}}`
