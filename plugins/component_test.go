package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// TestComponentPlugin loads a WebAssembly component (built by
// scripts/components.sh) as a plugin like any other: told from a core
// module by its header, pinned by sha256, its tools named
// <plugin>_<function>, arguments checked against the WIT schema before the
// guest runs, and a wrong pin refused.
func TestComponentPlugin(t *testing.T) {
	wasm := componentWasm(t, "kinds")
	if !sandbox.IsComponent(wasm) {
		t.Fatal("kinds.wasm is not told as a component")
	}
	ctx := context.Background()
	dir := t.TempDir()
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "wazero"), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(ctx)
	write(t, filepath.Join(dir, "kinds.wasm"), string(wasm))
	conf := fmt.Sprintf(`
[[plugin]]
name = "kinds"
path = "kinds.wasm"
sha256 = %q
env = { GREETING = "servus" }

[[plugin]]
name = "pinned"
path = "kinds.wasm"
sha256 = "%s"
`, sha256Hex(wasm), strings.Repeat("0", 64))
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, conf)
	cfg, err := config.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLoader(LoaderOptions{Engine: engine, Logger: discard()})
	g, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	if len(g.Failures) != 1 || g.Failures[0].Plugin != "pinned" || !strings.Contains(g.Failures[0].Err.Error(), "sha256") {
		t.Errorf("failures: %v; want pinned to fail its sha256 pin", g.Failures)
	}
	p := g.Plugin("kinds")
	if p == nil || p.ABI != 2 || p.Instances().Instances != 1 || p.Runtime != "component" {
		t.Fatalf("plugin kinds: %+v; want ABI 2 on a single instance of runtime component", p)
	}
	if got := len(toolNames(g)); got != 19 {
		t.Errorf("%d tools, want 19: %q", got, toolNames(g))
	}
	for _, tt := range []struct {
		tool, args, text string
		invalid          bool
	}{
		{"kinds_greet", `{"name":"Grüße"}`, "¡hola, Grüße!", false},
		{"kinds_getenv", `{"name":"GREETING"}`, "servus", false},
		{"kinds_next-color", `{"c":"green"}`, "blue", false},
		{"kinds_add", `{"a":256,"b":0,"c":0,"d":0,"e":0}`, "", true},
		{"kinds_next-color", `{"c":"purple"}`, "", true},
		{"kinds_echo-point", `{"p":{"x":1,"y":2}}`, "", true},
	} {
		tl := g.Tool(tt.tool)
		if tl == nil {
			t.Errorf("%s: no such tool", tt.tool)
			continue
		}
		if err := tl.validateArguments(json.RawMessage(tt.args)); (err != nil) != tt.invalid {
			t.Errorf("%s(%s): validateArguments = %v; want invalid %v", tt.tool, tt.args, err, tt.invalid)
		}
		if tt.invalid {
			continue
		}
		out, err := tl.Run(ctx, nil, json.RawMessage(tt.args), abi.Context{ID: json.RawMessage(`1`)})
		if err != nil {
			t.Errorf("%s: %v", tt.tool, err)
			continue
		}
		var res abi.CallToolResult
		if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != tt.text {
			t.Errorf("%s(%s) = %s; want text %q", tt.tool, tt.args, out, tt.text)
		}
	}
}

// TestComponentReload rebuilds a generation after a component's file
// changed: the plugin is replaced by the new component (its tools change),
// and the diff says so, as for a core module.
func TestComponentReload(t *testing.T) {
	kinds, counter := componentWasm(t, "kinds"), componentWasm(t, "counter")
	ctx := context.Background()
	dir := t.TempDir()
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "wazero"), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(ctx)
	wasm := filepath.Join(dir, "c.wasm")
	write(t, wasm, string(kinds))
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, "[[plugin]]\nname = \"c\"\npath = \"c.wasm\"\n")
	cfg, err := config.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLoader(LoaderOptions{Engine: engine, Logger: discard()})
	g1, err := l.Build(ctx, cfg, nil)
	if err != nil || g1.Tool("c_greet") == nil {
		t.Fatalf("first build: %v, tools %q", err, toolNames(g1))
	}
	write(t, wasm, string(counter))
	g2, err := l.Build(ctx, cfg, g1)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toolNames(g2), ","); got != "c_roundtrip,c_use-after-drop" {
		t.Errorf("after the file changed: tools %s; want the counter component's", got)
	}
	if c := Diff(g1, g2); !c.Tools || len(c.Reloaded) != 1 || c.Reloaded[0] != "c" {
		t.Errorf("Diff: %+v; want tools changed and c reloaded", c)
	}
	g1.Close(ctx)
	out, err := g2.Tool("c_roundtrip").Run(ctx, nil, json.RawMessage(`{"x":7}`), abi.Context{})
	if err != nil || !strings.Contains(string(out), `"7001"`) {
		t.Errorf("c_roundtrip after reload: %s, %v", out, err)
	}
	g2.Close(ctx)
}
