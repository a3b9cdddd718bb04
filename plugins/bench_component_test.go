package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// BenchmarkComponentToolRun is one tool call on a component as the
// server makes it (Tool.Run: the schema check, the guest's call, the
// output check): the kinds component's greet, a string in and out.
func BenchmarkComponentToolRun(b *testing.B) {
	kinds, err := os.ReadFile(filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm"))
	if err != nil {
		b.Skipf("skipping: %v; run scripts/components.sh", err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "wazero"), Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close(ctx)
	if err := os.WriteFile(filepath.Join(dir, "kinds.wasm"), kinds, 0o644); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(file, []byte("[[plugin]]\nname = \"kinds\"\npath = \"kinds.wasm\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.LoadConfig(file)
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewLoader(LoaderOptions{Engine: engine, Logger: discard()}).Build(ctx, cfg, nil)
	if err != nil || g.Tool("kinds_greet") == nil {
		b.Fatalf("build: %v", err)
	}
	defer g.Close(ctx)
	tl := g.Tool("kinds_greet")
	args := json.RawMessage(`{"name":"wörld"}`)
	cc := abi.Context{ID: json.RawMessage(`1`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tl.Run(ctx, nil, args, cc); err != nil {
			b.Fatal(err)
		}
	}
}
