package host

import (
	"encoding/json"
	"testing"
)

func TestNegotiate(t *testing.T) {
	tests := []struct{ requested, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"},
		{"1999-01-01", "2025-11-25"},
		{"", "2025-11-25"},
	}
	for _, tt := range tests {
		if got := negotiate(tt.requested).String(); got != tt.want {
			t.Errorf("negotiate(%q) = %s; want %s", tt.requested, got, tt.want)
		}
	}
}

func TestFilterTool(t *testing.T) {
	const tool = `{"name":"t","title":"T","description":"d","icons":[{"src":"x"}],"inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"outputSchema":{"type":"object"},"annotations":{"title":"A"},"execution":{"taskSupport":"optional"},"_meta":{"k":1}}`
	tests := []struct {
		v    version
		want string
	}{
		{v20241105, `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"_meta":{"k":1}}`},
		{v20250326, `{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"annotations":{"title":"A"},"_meta":{"k":1}}`},
		{v20250618, `{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{"a":{"title":"kept"}}},"outputSchema":{"type":"object"},"annotations":{"title":"A"},"_meta":{"k":1}}`},
		{v20251125, tool},
	}
	for _, tt := range tests {
		if got := string(filterTool(nil, []byte(tool), tt.v)); got != tt.want {
			t.Errorf("filterTool at %s:\n got  %s\n want %s", tt.v, got, tt.want)
		}
	}
}

func TestFilterCallResult(t *testing.T) {
	tests := []struct {
		v       version
		in      string
		want    string
		sameRef bool // returned without copying
	}{
		{v20251125, mediaResult, mediaResult, true},
		{v20250618, `{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, `{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, true},
		{v20250618, `{"content":[{"type":"resource_link","uri":"u","name":"n","icons":[]}]}`, `{"content":[{"type":"resource_link","uri":"u","name":"n"}]}`, false},
		{v20250326, `{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}],"structuredContent":{"a":1},"isError":false}`,
			`{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}],"isError":false}`, false},
		{v20241105, `{"content":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`,
			`{"content":[{"type":"text","text":"[audio content (audio/wav) omitted: protocol version 2024-11-05 cannot carry audio]"}]}`, false},
		{v20241105, `{"content":[{"type":"text","text":"the word \"audio\" alone changes nothing"}]}`,
			`{"content":[{"type":"text","text":"the word \"audio\" alone changes nothing"}]}`, true},
	}
	for _, tt := range tests {
		in := []byte(tt.in)
		got := filterCallResult(in, tt.v)
		if string(got) != tt.want {
			t.Errorf("filterCallResult(%s) at %s:\n got  %s\n want %s", tt.in, tt.v, got, tt.want)
		}
		if same := len(got) > 0 && &got[0] == &in[0]; same != tt.sameRef {
			t.Errorf("filterCallResult(%s) at %s: returned input unchanged = %v; want %v", tt.in, tt.v, same, tt.sameRef)
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
		for v := v20241105; v <= latestVersion; v++ {
			outs := map[string][]byte{
				"tool":     filterTool(nil, b, v),
				"item":     filterItem(nil, b, v),
				"prompt":   filterPrompt(nil, b, v),
				"content":  filterContent(nil, b, v),
				"result":   filterCallResult(b, v),
				"prompts":  filterPromptResult(b, v),
				"progress": filterProgress(b, v),
			}
			for name, out := range outs {
				if !json.Valid(out) {
					t.Fatalf("filter %s at %s of %s: invalid JSON %s", name, v, b, out)
				}
			}
		}
	})
}
