package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestRunPassesBytesThrough checks that a tool call's bulk crosses plugins
// without being re-encoded: the arguments reach the guest byte for byte
// (insignificant space included: encoding/json would have compacted
// them), the guest's output comes back as the very slice it returned, and
// a call with a 1 MiB argument and a 1 MiB output allocates less than
// five times that (the envelope, the schema's decoded tree and the
// jsonschema library's copy of the string).
func TestRunPassesBytesThrough(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	out := []byte(`{"content":[{"type":"text","text":"` + big + `"}]}`)
	var seen []byte
	m := NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`), nil
		},
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			seen = in
			return out, nil
		},
	})
	ctx := context.Background()
	g := build(t, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", m))
	defer g.Close(ctx)
	tool := g.Tool("p_echo")
	for _, tt := range []struct{ name, args string }{
		{"small, spaced", `{ "text" : "a\u00e9" }`},
		{"1 MiB", `{"text":"` + big + `"}`},
	} {
		got, err := tool.Run(ctx, nil, json.RawMessage(tt.args), abi.Context{ID: json.RawMessage(`7`)})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !bytes.Contains(seen, []byte(`"arguments":`+tt.args+`}`)) {
			t.Errorf("%s: the envelope %.120q… does not carry the arguments as sent", tt.name, seen)
		}
		if len(got) != len(out) || &got[0] != &out[0] {
			t.Errorf("%s: the output was copied or re-encoded", tt.name)
		}
	}
	args := json.RawMessage(`{"text":"` + big + `"}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 4
	for range calls {
		if _, err := tool.Run(ctx, nil, args, abi.Context{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / calls; per > 5<<20 {
		t.Errorf("a 1 MiB call allocates %d bytes; want under 5 MiB (one envelope, one decoded tree, one library copy)", per)
	}
}
