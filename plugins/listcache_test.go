package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// countingLoader is a Loader with a list cache whose module loads are
// counted.
func countingLoader(t *testing.T, listDir string, engine *sandbox.Engine) (*Loader, *atomic.Int32) {
	l := NewLoader(LoaderOptions{Engine: engine, Logger: discard(), ListCacheDir: listDir})
	var n atomic.Int32
	load := l.load
	l.load = func(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
		n.Add(1)
		return load(ctx, name, wasm, lim)
	}
	return l, &n
}

// TestListCache: a plugin loaded once is listed from the list cache on the
// next start without loading its module; the module loads on first use,
// once however many calls race for it; a change of code or config misses
// the cache; lists that changed since they were cached are rewritten and
// signalled on first use.
func TestListCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	engine := newEngine(t)
	one := int32(abi.Version)
	file := filepath.Join(dir, "clock.wasm")
	write(t, file, string(wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[{"type":"text","text":"12:00"}]}`},
		wfunc{name: abi.ExportListPrompts, output: `{"prompts":[{"name":"greet"}]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)))
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "clock", Path: file, Config: map[string]string{"tz": "UTC"}}}

	// First start: loaded at once, and its lists are cached.
	l, loads := countingLoader(t, listDir, engine)
	g, err := l.Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("Build: %v %v", err, g.Failures)
	}
	g.Close(ctx)
	if loads.Load() != 1 {
		t.Fatalf("first start: %d loads; want 1", loads.Load())
	}
	entries, _ := filepath.Glob(filepath.Join(listDir, "*.json"))
	if len(entries) != 1 {
		t.Fatalf("list cache holds %v; want one entry", entries)
	}

	// Warm start: listed without loading.
	l, loads = countingLoader(t, listDir, engine)
	g, err = l.Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("warm Build: %v %v", err, g.Failures)
	}
	p := g.Plugin("clock")
	if loads.Load() != 0 || g.Tool("clock_now") == nil || g.Prompt("greet") == nil || p.ABI != 2 || p.GuestVersion != abi.Version {
		t.Fatalf("warm start: %d loads, tool %v, prompt %v, ABI %d v%d; want 0 loads and the cached lists",
			loads.Load(), g.Tool("clock_now"), g.Prompt("greet"), p.ABI, p.GuestVersion)
	}
	done := make(chan error, 8)
	for range 8 {
		go func() {
			out, err := g.Tool("clock_now").Run(ctx, nil, json.RawMessage(`{}`), abi.Context{})
			if err == nil && !strings.Contains(string(out), "12:00") {
				err = &OutputError{Plugin: "clock", Msg: string(out)}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Errorf("call on a lazy module: %v", err)
		}
	}
	if loads.Load() != 1 {
		t.Errorf("8 racing first calls: %d loads; want 1", loads.Load())
	}
	if got := l.signals.take(); len(got) != 0 {
		t.Errorf("lists as cached, yet signalled %v", got)
	}
	g.Close(ctx)

	// Another config is another key: loaded at once.
	cfg2 := config.DefaultConfig()
	cfg2.Plugins = []config.Spec{{Name: "clock", Path: file, Config: map[string]string{"tz": "CET"}}}
	l, loads = countingLoader(t, listDir, engine)
	g, err = l.Build(ctx, cfg2, nil)
	if err != nil || loads.Load() != 1 {
		t.Fatalf("changed config: %v, %d loads; want 1", err, loads.Load())
	}
	g.Close(ctx)

	// A stale entry (the plugin listed more when it was cached) serves
	// until first use, which rewrites it and signals the change.
	for _, e := range entries {
		b, _ := os.ReadFile(e)
		stale := strings.Replace(string(b), `"tools":[`, `"tools":[`+tool("gone")+`,`, 1)
		if err := os.WriteFile(e, []byte(stale), 0o600); err != nil {
			t.Fatal(err)
		}
		// Written by mcphost, so recorded: stale, not damaged.
		if err := cachefile.Record(e, cachefile.Sum([]byte(stale))); err != nil {
			t.Fatal(err)
		}
	}
	l, loads = countingLoader(t, listDir, engine)
	g, err = l.Build(ctx, cfg, nil)
	if err != nil || loads.Load() != 0 || g.Tool("clock_gone") == nil {
		t.Fatalf("stale entry: %v, %d loads, gone %v; want the cached lists, unloaded", err, loads.Load(), g.Tool("clock_gone"))
	}
	if _, err := g.Tool("clock_now").Run(ctx, nil, json.RawMessage(`{}`), abi.Context{}); err != nil {
		t.Fatalf("call: %v", err)
	}
	if got := l.signals.take(); !slices.Equal(got, []string{"clock"}) {
		t.Errorf("stale lists on first use: signalled %v; want [clock]", got)
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(e); strings.Contains(string(b), "gone") {
			t.Errorf("stale entry not rewritten: %s", b)
		}
	}
	g.Close(ctx)

	// Changed code: a miss, loaded at once.
	write(t, file, string(wasmModule(wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("later") + `]}`})))
	l, loads = countingLoader(t, listDir, engine)
	g, err = l.Build(ctx, cfg, nil)
	if err != nil || loads.Load() != 1 || g.Tool("clock_later") == nil {
		t.Fatalf("changed code: %v, %d loads; want 1 and the new tool", err, loads.Load())
	}
	g.Close(ctx)
}

// TestLazyModuleClose: a lazy module closed before its first use never
// loads; one closed after closes what it loaded, and calls then fail.
func TestLazyModuleClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "m.wasm")
	wasm := wasmModule(wfunc{name: "f", output: "ok"})
	write(t, file, string(wasm))
	engine := newEngine(t)
	var loads atomic.Int32
	var last Module
	lm := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), exports: []string{"f"}, log: discard(),
		load: func(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
			loads.Add(1)
			m, err := engine.Load(ctx, name, wasm, lim)
			last = m
			return m, err
		}}
	if !lm.HasExport("f") || lm.HasExport("g") || loads.Load() != 0 {
		t.Fatalf("HasExport loaded the module or answered wrong")
	}
	if out, err := lm.Call(ctx, "f", nil); err != nil || string(out) != "ok" {
		t.Fatalf("Call: %q, %v", out, err)
	}
	if err := lm.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := last.Call(ctx, "f", nil); err == nil {
		t.Errorf("the loaded module still serves after Close")
	}
	if _, err := lm.Call(ctx, "f", nil); err == nil || loads.Load() != 1 {
		t.Errorf("call after Close: %v, %d loads; want an error and no new load", err, loads.Load())
	}

	// A file that changed since it was listed is refused, said so, and
	// reported stale (the Loader drops its digest and has it reloaded),
	// when the module was listed without reading it (the file digest
	// cache): what runs is what was hashed.
	var stale atomic.Int32
	lm2 := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), log: discard(), load: lm.load, stale: func() { stale.Add(1) }}
	write(t, file, "rewritten")
	if _, err := lm2.Call(ctx, "f", nil); err == nil || !strings.Contains(err.Error(), "changed since the plugin was listed") || stale.Load() != 1 {
		t.Errorf("changed file: got %v, %d stale reports; want it named as changed and reported once", err, stale.Load())
	}
	if loads.Load() != 1 {
		t.Errorf("the changed code loaded (%d loads)", loads.Load())
	}

	// A module listed from the code it read holds that code: the file
	// rewritten meanwhile (a reload under way, or one that failed and
	// left this generation serving) does not cost its first call.
	lm3 := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), wasm: wasm, log: discard(), load: lm.load, stale: func() { stale.Add(1) }}
	if out, err := lm3.Call(ctx, "f", nil); err != nil || string(out) != "ok" || stale.Load() != 1 {
		t.Errorf("held code, file rewritten: %q, %v, %d stale reports; want ok and none new", out, err, stale.Load())
	}
	if lm3.wasm != nil {
		t.Errorf("the held code outlived the load")
	}
	lm3.Close(ctx)

	// A module the file digest cache listed, whose file's metadata is
	// still what it vouched for, loads what the engine kept of its digest
	// without reading the file; once the file changed it reads and checks
	// it (here: refused as changed), and when nothing is kept it reads it.
	write(t, file, string(wasm))
	st, _ := cachefile.StatOf(file)
	var kept, read atomic.Int32
	keptLoad := func(err error) func(ctx context.Context, name, sum string, lim sandbox.Limits) (Module, error) {
		return func(ctx context.Context, name, sum string, lim sandbox.Limits) (Module, error) {
			kept.Add(1)
			if err != nil {
				return nil, err
			}
			return engine.Load(ctx, name, wasm, lim)
		}
	}
	readLoad := func(ctx context.Context, name string, b []byte, lim sandbox.Limits) (Module, error) {
		read.Add(1)
		return engine.Load(ctx, name, b, lim)
	}
	lm5 := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), log: discard(), load: readLoad, stat: st, loadKept: keptLoad(nil)}
	if out, err := lm5.Call(ctx, "f", nil); err != nil || string(out) != "ok" || kept.Load() != 1 || read.Load() != 0 {
		t.Errorf("kept code, file as vouched for: %q, %v, %d kept and %d read loads; want ok from one kept load", out, err, kept.Load(), read.Load())
	}
	lm5.Close(ctx)
	lm6 := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), log: discard(), load: readLoad, stat: st, loadKept: keptLoad(sandbox.ErrNotKept)}
	if out, err := lm6.Call(ctx, "f", nil); err != nil || string(out) != "ok" || kept.Load() != 2 || read.Load() != 1 {
		t.Errorf("nothing kept: %q, %v, %d kept and %d read loads; want ok from the file after a kept attempt", out, err, kept.Load(), read.Load())
	}
	lm6.Close(ctx)
	write(t, file, "rewritten")
	lm7 := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), log: discard(), load: readLoad, stat: st, loadKept: keptLoad(nil), stale: func() { stale.Add(1) }}
	if _, err := lm7.Call(ctx, "f", nil); err == nil || !strings.Contains(err.Error(), "changed since the plugin was listed") || kept.Load() != 2 {
		t.Errorf("file changed since vouched for: %v, %d kept loads; want it read and refused as changed, no kept load", err, kept.Load())
	}

	// A first use met by shutdown (the engine closed under it) fails its
	// call and says so at info, not as the plugin's fault.
	closed, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "closed"), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close(ctx)
	log, rec := logtest.New()
	lm4 := &lazyModule{name: "m", file: file, sum: sha256hex(wasm), wasm: wasm, log: log,
		load: func(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
			return closed.Load(ctx, name, wasm, lim)
		}}
	if _, err := lm4.Call(ctx, "f", nil); !errors.Is(err, sandbox.ErrEngineClosed) {
		t.Errorf("first use on a closed engine: %v; want sandbox.ErrEngineClosed", err)
	}
	if got := rec.All(); len(got) != 1 || !strings.HasPrefix(got[0], "INFO plugin module not loaded on first use: the server is shutting down") {
		t.Errorf("logged %q; want one info line saying the server is shutting down", got)
	}
}

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestListCacheFirstStartInterpreted: on a first start with the list
// cache and the interpreter tier, a plugin whose code is not compiled yet
// is listed from one interpreted load, whose module then closes (its
// compile goes on in the background into the cache): the plugin serves
// from a module that loads on first use, as on a warm start, and is
// listed as before. A plugin served without the list cache keeps the
// module it was listed from.
func TestListCacheFirstStartInterpreted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "wazero"), Logger: discard(),
		InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(ctx)
	one := int32(abi.Version)
	file := filepath.Join(dir, "clock.wasm")
	write(t, file, string(wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[{"type":"text","text":"12:00"}]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)))
	cfg := config.DefaultConfig()
	// max_instances > 1: the plugin may start on the interpreter.
	cfg.Plugins = []config.Spec{{Name: "clock", Path: file, MaxInstances: 2}}
	for _, tc := range []struct {
		name      string
		listDir   string
		wantLazy  bool
		wantLoads int32 // after one call
	}{
		{name: "list cache", listDir: filepath.Join(dir, "lists"), wantLazy: true, wantLoads: 2},
		{name: "no list cache", wantLazy: false, wantLoads: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, loads := countingLoader(t, tc.listDir, engine)
			g, err := l.Build(ctx, cfg, nil)
			if err != nil || len(g.Failures) > 0 {
				t.Fatalf("Build: %v %v", err, g.Failures)
			}
			defer g.Close(ctx)
			_, lazy := g.Plugin("clock").core.module.(*lazyModule)
			if lazy != tc.wantLazy || g.Tool("clock_now") == nil {
				t.Fatalf("after the first load: lazy %v, tool %v; want lazy %v and the tool listed", lazy, g.Tool("clock_now"), tc.wantLazy)
			}
			out, err := g.Tool("clock_now").Run(ctx, nil, json.RawMessage(`{}`), abi.Context{})
			if err != nil || !strings.Contains(string(out), "12:00") {
				t.Fatalf("call: got %s, %v; want 12:00", out, err)
			}
			if got := loads.Load(); got != tc.wantLoads {
				t.Errorf("loads after one call: got %d; want %d", got, tc.wantLoads)
			}
			if got := l.signals.take(); len(got) != 0 {
				t.Errorf("lists as listed, yet signalled %v", got)
			}
		})
	}

	// A reload of new code (a save) keeps the module it is listed from:
	// its author calls it next.
	l, _ := countingLoader(t, filepath.Join(dir, "lists"), engine)
	prev, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prev.Close(ctx)
	write(t, file, string(wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[{"type":"text","text":"13:00"}]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)))
	g, err := l.Build(ctx, cfg, prev)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("reload: %v %v", err, g.Failures)
	}
	defer g.Close(ctx)
	if _, lazy := g.Plugin("clock").core.module.(*lazyModule); lazy {
		t.Error("reloaded with new code: the module loads on first use; want the one it was listed from kept")
	}
}

// TestListCacheKeepsCompiledCode: a plugin listed from the list cache
// loads its compiled code on first use, so a cache prune after the build
// (the cache over its cap) leaves that code alone.
func TestListCacheKeepsCompiledCode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	engine := newEngine(t)
	one := int32(abi.Version)
	wasm := wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)
	file := filepath.Join(dir, "clock.wasm")
	write(t, file, string(wasm))
	sum := sha256.Sum256(wasm)
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "clock", Path: file}}
	for _, start := range []struct {
		name string
		max  int64 // the caches' cap
	}{{"first", 0}, {"warm", 1}} {
		l := NewLoader(LoaderOptions{Engine: engine, Logger: discard(), ListCacheDir: listDir,
			CacheMax: start.max, CacheDirs: []string{engine.CacheDir()}})
		g, err := l.Build(ctx, cfg, nil)
		if err != nil || len(g.Failures) > 0 {
			t.Fatalf("%s start: %v %v", start.name, err, g.Failures)
		}
		g.Close(ctx)
		if files := engine.CodeFiles(hex.EncodeToString(sum[:])); len(files) == 0 {
			t.Errorf("%s start: the plugin's compiled code is not in the cache; want it kept", start.name)
		}
	}
}
