package plugins_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// A Loader turns validated specs into a Generation: every plugin loaded
// on the sandbox's Engine and listed, its tools named after the plugin,
// and every plugin that could not load reported as a Failure that names
// it (the others load regardless). Here one Wasm plugin, assembled in
// place, loads and serves a call; another's file is missing.
func ExampleLoader_Build() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir, err := os.MkdirTemp("", "mcphost-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	wasm := wasmgen.Module(
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"hello","description":"Says hello.","inputSchema":{"type":"object"}}]}`},
		wasmgen.Func{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"hello from a Wasm plugin"}]}`},
	)
	file := filepath.Join(dir, "greeter.wasm")
	if err := os.WriteFile(file, wasm, 0o644); err != nil {
		panic(err)
	}
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "cache"), Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer engine.Close(ctx)

	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{
		{Name: "greeter", Path: file},
		{Name: "absent", Path: filepath.Join(dir, "absent.wasm")},
	}
	gen, err := plugins.NewLoader(plugins.LoaderOptions{Engine: engine, Logger: quiet}).Build(ctx, cfg, nil)
	if err != nil {
		panic(err) // only when ctx ends
	}
	defer gen.Close(ctx)

	for _, t := range gen.Tools {
		fmt.Printf("tool %s (%s's %s): %s\n", t.Name, t.Plugin.Name, t.Original, t.Def.Description)
	}
	for _, f := range gen.Failures {
		fmt.Printf("failed: %s\n", f.Plugin)
	}
	out, err := gen.Tool("greeter_hello").Run(ctx, nil, json.RawMessage(`{}`), abi.Context{})
	if err != nil {
		panic(err)
	}
	var res abi.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// tool greeter_hello (greeter's hello): Says hello.
	// failed: absent
	// hello from a Wasm plugin
}
