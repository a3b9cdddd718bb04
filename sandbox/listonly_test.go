package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/mcphost/mcphost/internal/wasmgen"
)

// TestListOnly: a module loaded ListOnly serves its calls on the
// interpreter and leaves no compiled code in the cache, even from an
// Engine that does not interpret first; loaded otherwise, it does.
func TestListOnly(t *testing.T) {
	ctx := context.Background()
	e, err := NewEngine(ctx, EngineOptions{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	wasm := wasmgen.Module(wasmgen.Func{Name: "list_tools", Output: `{"tools":[]}`})
	h := sha256.Sum256(wasm)
	sum := hex.EncodeToString(h[:])
	for _, tt := range []struct {
		name     string
		listOnly bool
		compiled bool
	}{{"list only", true, false}, {"served", false, true}} {
		m, err := e.Load(ctx, "m", wasm, Limits{ListOnly: tt.listOnly, Instances: 1})
		if err != nil {
			t.Fatalf("%s: Load: %v", tt.name, err)
		}
		if out, err := m.Call(ctx, "list_tools", nil); err != nil || string(out) != `{"tools":[]}` {
			t.Fatalf("%s: call: %q, %v", tt.name, out, err)
		}
		if err := m.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got := len(e.CodeFiles(sum)) > 0; got != tt.compiled {
			t.Errorf("%s: compiled code in the cache: %v; want %v", tt.name, got, tt.compiled)
		}
	}
}
