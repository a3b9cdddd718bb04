package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/sandbox"
)

// TestWasmEndToEnd loads real Wasm plugins through the sandbox: one built
// from Go source, the same binary by path with a sha256 pin, and a broken
// file, from a plugins.toml.
func TestWasmEndToEnd(t *testing.T) {
	needGo(t)
	if raceEnabled {
		t.Skip("compiling a Go guest takes about 30 s under -race; TestWasmGenerated covers the sandbox path")
	}
	ctx := context.Background()
	dir := t.TempDir()
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "wazero"), Logger: discard()})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	defer engine.Close(ctx)
	buildCache := filepath.Join(dir, "build")
	built, err := source.BuildGo(ctx, "source/testdata/goodplugin", source.BuildOptions{CacheDir: buildCache})
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	wasm, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "good.wasm"), string(wasm))
	write(t, filepath.Join(dir, "broken.wasm"), "not wasm at all")
	src, _ := filepath.Abs("source/testdata/goodplugin")
	conf := fmt.Sprintf(`
[server]
memory = "64MiB"
max_instances = 1

[[plugin]]
name = "fromsource"
source = %q

[[plugin]]
name = "frompath"
path = "good.wasm"
sha256 = %q
timeout = "3s"

[[plugin]]
name = "broken"
path = "broken.wasm"
`, src, sha256Hex(wasm))
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, conf)
	cfg, err := config.LoadConfig(file)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Engine: engine, BuildCacheDir: buildCache, Logger: log})
	g, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if got, want := toolNames(g), []string{"frompath_echo", "fromsource_echo"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	if len(g.Failures) != 1 || g.Failures[0].Plugin != "broken" || !strings.HasPrefix(g.Failures[0].Err.Error(), "load: ") {
		t.Errorf("failures: got %v; want broken to fail in load", g.Failures)
	}
	if len(rec.Matching("ERROR plugin failed plugin=broken")) != 1 {
		t.Errorf("the broken plugin's failure was not logged: %q", rec.All())
	}
	for _, p := range g.Plugins {
		if p.ABI != 2 || p.GuestVersion != abi.Version {
			t.Errorf("plugin %s: ABI %d, GuestVersion %d; want 2 and %d", p.Name, p.ABI, p.GuestVersion, abi.Version)
		}
	}
	tl := g.Tool("frompath_echo")
	if err := tl.validateArguments(json.RawMessage(`{"msg":1}`)); err == nil {
		t.Errorf("validateArguments with a number for a string: got nil; want an error")
	}
	out, err := tl.Run(ctx, nil, json.RawMessage(`{"msg":"hi"}`), abi.Context{ID: json.RawMessage(`1`)})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	var res abi.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("Call output %s: %v", out, err)
	}
	if got, want := res.Content[0].Text, `frompath:echo:{"msg":"hi"}`; got != want {
		t.Errorf("echo: got %q; want %q", got, want)
	}

	// An unchanged config reuses both modules.
	g2, err := l.Build(ctx, cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	if g2.Plugin("frompath") != g.Plugin("frompath") || g2.Plugin("fromsource") != g.Plugin("fromsource") {
		t.Errorf("rebuild with no change: plugins were not reused")
	}
	if c := Diff(g, g2); c.Any() {
		t.Errorf("Diff of rebuild: got %+v; want nothing", c)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g2.Tool("fromsource_echo").Run(ctx, nil, nil, abi.Context{}); err != nil {
		t.Errorf("call after closing the older generation: %v", err)
	}
	if err := g2.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func newEngine(t *testing.T) *sandbox.Engine {
	t.Helper()
	ctx := context.Background()
	e, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(t.TempDir(), "wazero"), Logger: discard()})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	t.Cleanup(func() { _ = e.Close(ctx) })
	return e
}

// TestWasmGenerated loads hand-assembled Wasm modules through the sandbox:
// v2 and v1 plugins, a trapping list export, an unknown ABI, and output of
// the wrong shape.
func TestWasmGenerated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	one := int32(abi.Version)
	modules := map[string][]byte{
		"v2": wasmModule(
			wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
			wfunc{name: abi.ExportCallTool, output: `{"content":[{"type":"text","text":"12:00"}]}`},
			wfunc{name: abi.ExportListResources, output: `{"resources":[` + resource("clock://now") + `]}`},
			wfunc{name: abi.ExportABIVersion, i32: &one},
		),
		"v1": wasmModule(
			wfunc{name: abi.ExportDescribe, output: `{"tools":[` + tool("legacy") + `]}`},
			wfunc{name: abi.ExportCall, output: `{"content":[]}`},
		),
		"badout": wasmModule(
			wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("t") + `]}`},
			wfunc{name: abi.ExportCallTool, output: `{"content":"nope"}`},
		),
		"traps":   wasmModule(wfunc{name: abi.ExportListTools, trap: true}),
		"unknown": wasmModule(wfunc{name: "greet", output: "hi"}),
	}
	cfg := config.DefaultConfig()
	for _, name := range []string{"v2", "v1", "badout", "traps", "unknown"} {
		file := filepath.Join(dir, name+".wasm")
		write(t, file, string(modules[name]))
		cfg.Plugins = append(cfg.Plugins, config.Spec{Name: name, Path: file, MaxInstances: 2})
	}
	l := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()})
	g, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	defer g.Close(ctx)

	if got, want := toolNames(g), []string{"badout_t", "v1_legacy", "v2_now"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	var ce *sandbox.CallError
	if err := g.Failed("traps"); !errors.As(err, &ce) || ce.Kind != sandbox.KindTrap {
		t.Errorf("traps: got %v; want a trap", err)
	}
	if err := g.Failed("unknown"); err == nil || !strings.Contains(err.Error(), `unknown ABI: exports ["greet"]`) {
		t.Errorf("unknown: got %v; want an unknown ABI error listing greet", err)
	}
	if p := g.Plugin("v2"); p.ABI != 2 || p.GuestVersion != abi.Version || g.Resource("clock://now") == nil {
		t.Errorf("v2: ABI %d, GuestVersion %d, resource %v; want 2, %d and clock://now", p.ABI, p.GuestVersion,
			g.Resource("clock://now"), abi.Version)
	}
	if p := g.Plugin("v1"); p.ABI != 1 || p.GuestVersion != 0 {
		t.Errorf("v1: ABI %d, GuestVersion %d; want 1 and 0", p.ABI, p.GuestVersion)
	}
	for _, tt := range []struct{ tool, want string }{
		{"v2_now", `{"content":[{"type":"text","text":"12:00"}]}`},
		{"v1_legacy", `{"content":[]}`},
	} {
		out, err := g.Tool(tt.tool).Run(ctx, nil, json.RawMessage(`{}`), abi.Context{})
		if err != nil || string(out) != tt.want {
			t.Errorf("call %s: got %s, %v; want %s", tt.tool, out, err, tt.want)
		}
	}
	var oe *OutputError
	if _, err := g.Tool("badout_t").Run(ctx, nil, nil, abi.Context{}); !errors.As(err, &oe) {
		t.Errorf("badout: got %v; want an *OutputError", err)
	}
	if _, err := g.Plugin("v2").getPrompt(ctx, "x", nil, abi.Context{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetPrompt on a plugin without prompts: got %v; want ErrNotFound", err)
	}
	if _, err := g.Plugin("v2").complete(ctx, abi.CompleteParams{}, abi.Context{}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Complete without the export: got %v; want ErrNotSupported", err)
	}
}

// TestWasmHammer calls Wasm tools while generations are rebuilt and
// swapped: a plugin whose file keeps changing is reloaded every time, one
// that does not is reused, and no call fails.
func TestWasmHammer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stable := filepath.Join(dir, "stable.wasm")
	moving := filepath.Join(dir, "moving.wasm")
	write(t, stable, string(wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("s") + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[]}`},
	)))
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "stable", Path: stable, MaxInstances: 2}, {Name: "moving", Path: moving, MaxInstances: 2}}
	l := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()})
	r := NewRegistry()
	var (
		wg    sync.WaitGroup
		stop  atomic.Bool
		calls atomic.Int64
		errs  = make(chan error, 4)
	)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				g, release := r.Acquire()
				for _, tl := range g.Tools {
					if _, err := tl.Run(ctx, nil, nil, abi.Context{}); err != nil {
						errs <- fmt.Errorf("generation %d, tool %s: %w", g.ID, tl.Name, err)
						release()
						return
					}
					calls.Add(1)
				}
				release()
			}
		}()
	}
	var prev *Generation
	const swaps = 20
	for i := 0; i < swaps; i++ {
		write(t, moving, string(wasmModule(
			wfunc{name: abi.ExportListTools, output: fmt.Sprintf(`{"tools":[%s]}`, tool(fmt.Sprintf("m%d", i)))},
			wfunc{name: abi.ExportCallTool, output: fmt.Sprintf(`{"content":[{"type":"text","text":"%d"}]}`, i)},
		)))
		g, err := l.Build(ctx, cfg, prev)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Failures) > 0 {
			t.Fatalf("generation %d: failures %v", g.ID, g.Failures)
		}
		if prev != nil && g.Plugin("stable") != prev.Plugin("stable") {
			t.Errorf("generation %d: the unchanged plugin was not reused", g.ID)
		}
		c := r.Swap(ctx, g)
		if i > 0 && (!c.Tools || strings.Join(c.Reloaded, ",") != "moving") {
			t.Errorf("swap %d: got %+v; want tools changed and moving reloaded", i, c)
		}
		prev = g
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.Close(ctx)
	t.Logf("%d calls over %d swaps", calls.Load(), swaps)
}
