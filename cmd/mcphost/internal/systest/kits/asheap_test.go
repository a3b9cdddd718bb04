package kits

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/sandbox"
)

// TestASKitHeapReclaimed calls the AssemblyScript template's tool on one
// long-lived instance, as mcphost serves a plugin that keeps state, many
// times over what a small memory holds if each call's garbage stays: the
// template's runtime must reclaim it. Built with AssemblyScript's stub
// runtime, which never frees, the instance ran out of memory (a trap, a
// failed call and the plugin's state lost) within 60,000 calls at the
// default 256 MiB, and within 900 at 4 MiB.
func TestASKitHeapReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an AssemblyScript plugin")
	}
	path := systest.BuildASKitTestdata(t, "")
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	m, err := eng.Load(ctx, "kas", wasm, sandbox.Limits{Instances: 1, MemoryPages: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	g, err := sandbox.NewGuest(m, "kas")
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"text":"héllo wörld, a text of a few words"}`)
	const calls = 5000
	for i := range calls {
		r, err := g.CallTool(ctx, sandbox.ToolRef{Name: "measure"}, args, abi.Context{})
		if err != nil || r.IsError {
			t.Fatalf("call %d of %d: %v %s", i+1, calls, err, r.JSON)
		}
	}
	if st := m.Stats(); st.Created != 1 || st.Discarded != 0 {
		t.Errorf("instances created %d, discarded %d; want one instance serving every call", st.Created, st.Discarded)
	}
}
