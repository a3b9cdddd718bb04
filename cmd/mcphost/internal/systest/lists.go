package systest

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/sandbox"
)

// EmbedLists returns wasm with its lists section, as mcphost lists
// --embed writes it.
func EmbedLists(tb testing.TB, wasm []byte) []byte {
	tb.Helper()
	ctx := context.Background()
	eng, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	defer eng.Close(ctx)
	out, info, err := plugins.NewLoader(plugins.LoaderOptions{Engine: eng}).EmbedLists(ctx, "bench", wasm, "")
	if err != nil || info.Dynamic != "" || info.Tools == 0 {
		tb.Fatalf("EmbedLists: %v, %+v", err, info)
	}
	return out
}
