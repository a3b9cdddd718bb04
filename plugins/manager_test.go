package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/sandbox"
)

// toolModule assembles a Wasm plugin listing the named tools.
func toolModule(names ...string) []byte {
	var ts []string
	for _, n := range names {
		ts = append(ts, tool(n))
	}
	return wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + strings.Join(ts, ",") + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[]}`},
	)
}

// managerRig runs a watching Manager and hands its reports to the test.
type managerRig struct {
	m       *Manager
	reg     *Registry
	reports chan ReloadReport
}

func startManager(t *testing.T, l *Loader, configFile string) *managerRig {
	t.Helper()
	r := &managerRig{reg: NewRegistry(), reports: make(chan ReloadReport, 16)}
	r.m = NewManager(ManagerOptions{
		Loader: l, Registry: r.reg, ConfigFile: configFile, Watch: true,
		Debounce: 50 * time.Millisecond, Logger: discard(),
		OnReload: func(rep ReloadReport) { r.reports <- rep },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		r.reg.Close(context.Background())
	})
	return r
}

func (r *managerRig) next(t *testing.T) ReloadReport {
	t.Helper()
	select {
	case rep := <-r.reports:
		return rep
	case <-time.After(batchTimeout):
		t.Fatalf("no reload within %v", batchTimeout)
		return ReloadReport{}
	}
}

// current returns the tool names of the registry's generation.
func (r *managerRig) current() (names []string, a *Plugin) {
	g, release := r.reg.Acquire()
	defer release()
	return toolNames(g), g.Plugin("a")
}

// outcome is the part of a report a step checks.
type outcome struct {
	reloaded []string
	kinds    []string
	failed   []string // "name" or "name(kept)"
	err      bool
}

func outcomeOf(rep ReloadReport) outcome {
	o := outcome{reloaded: rep.Changes.Reloaded, kinds: rep.Changes.Kinds(), err: rep.Err != nil}
	for _, f := range rep.Failures {
		s := f.Plugin
		if f.Kept {
			s += "(kept)"
		}
		o.failed = append(o.failed, s)
	}
	return o
}

// TestManagerReloads edits every kind of watched path, breaks things and
// fixes them, through a real watcher and real (tiny) Wasm modules.
func TestManagerReloads(t *testing.T) {
	root := t.TempDir()
	p := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	conf := p("plugins.toml")
	base := "[server]\nplugin_dir = \"dropins\"\n\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	write(t, conf, base)
	write(t, p("a.wasm"), string(toolModule("x")))
	r := startManager(t, NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()}), conf)

	rep := r.next(t)
	if got, want := outcomeOf(rep), (outcome{reloaded: []string{"a"}, kinds: []string{"tools"}}); !rep.Initial || !reflect.DeepEqual(got, want) {
		t.Fatalf("initial load: got %+v (initial %v); want %+v", got, rep.Initial, want)
	}
	lastGen := rep.Gen
	var trapped = wasmModule(wfunc{name: abi.ExportListTools, trap: true}, wfunc{name: abi.ExportCallTool, output: `{}`})

	steps := []struct {
		name    string
		do      func(t *testing.T)
		trigger string // a path the report's Trigger must hold
		want    outcome
		tools   []string // the registry's tools afterwards
	}{
		{"plugins.toml edited", func(t *testing.T) { write(t, conf, base+"tool_prefix = \"A_\"\n") },
			conf, outcome{kinds: []string{"tools"}}, []string{"A_x"}},
		{".wasm replaced by rename", func(t *testing.T) {
			write(t, p("a.wasm.tmp"), string(toolModule("y")))
			if err := os.Rename(p("a.wasm.tmp"), p("a.wasm")); err != nil {
				t.Fatal(err)
			}
		}, p("a.wasm"), outcome{reloaded: []string{"a"}, kinds: []string{"tools"}}, []string{"A_y"}},
		{".wasm written in place", func(t *testing.T) { write(t, p("a.wasm"), string(toolModule("z"))) },
			p("a.wasm"), outcome{reloaded: []string{"a"}, kinds: []string{"tools"}}, []string{"A_z"}},
		{"the same content saved again", func(t *testing.T) { write(t, p("a.wasm"), string(toolModule("z"))) },
			p("a.wasm"), outcome{}, []string{"A_z"}},
		{"drop-in directory created with a plugin", func(t *testing.T) {
			if err := os.Mkdir(p("dropins"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, p("dropins", "b.wasm"), string(toolModule("q")))
		}, p("dropins"), outcome{reloaded: []string{"b"}, kinds: []string{"tools"}}, []string{"A_z", "b_q"}},
		{"drop-in removed", func(t *testing.T) {
			if err := os.Remove(p("dropins", "b.wasm")); err != nil {
				t.Fatal(err)
			}
		}, p("dropins", "b.wasm"), outcome{reloaded: []string{"b"}, kinds: []string{"tools"}}, []string{"A_z"}},
		{"a bad module keeps the old one", func(t *testing.T) { write(t, p("a.wasm"), "not wasm") },
			p("a.wasm"), outcome{failed: []string{"a(kept)"}}, []string{"A_z"}},
		{"the fix is applied", func(t *testing.T) { write(t, p("a.wasm"), string(toolModule("w"))) },
			p("a.wasm"), outcome{reloaded: []string{"a"}, kinds: []string{"tools"}}, []string{"A_w"}},
		{"a TOML syntax error changes nothing", func(t *testing.T) { write(t, conf, base+"tool_prefix = \n") },
			conf, outcome{err: true}, []string{"A_w"}},
		{"a sha256 mismatch keeps the old one", func(t *testing.T) {
			write(t, conf, base+"tool_prefix = \"A_\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\n")
		}, conf, outcome{failed: []string{"a(kept)"}}, []string{"A_w"}},
		{"the pin removed", func(t *testing.T) { write(t, conf, base) },
			conf, outcome{kinds: []string{"tools"}}, []string{"a_w"}},
		{"a list export that traps keeps the old one", func(t *testing.T) { write(t, p("a.wasm"), string(trapped)) },
			p("a.wasm"), outcome{failed: []string{"a(kept)"}}, []string{"a_w"}},
		{"the next good save is applied", func(t *testing.T) { write(t, p("a.wasm"), string(toolModule("v"))) },
			p("a.wasm"), outcome{reloaded: []string{"a"}, kinds: []string{"tools"}}, []string{"a_v"}},
	}
	for _, st := range steps {
		_, before := r.current()
		st.do(t)
		rep := r.next(t)
		if got := outcomeOf(rep); !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: got %+v; want %+v", st.name, got, st.want)
		}
		if !slices.Contains(rep.Trigger, st.trigger) {
			t.Errorf("%s: trigger %q lacks %s", st.name, rep.Trigger, st.trigger)
		}
		tools, after := r.current()
		if !reflect.DeepEqual(tools, st.tools) {
			t.Errorf("%s: tools %q; want %q", st.name, tools, st.tools)
		}
		switch {
		case st.want.err && rep.Gen != lastGen:
			t.Errorf("%s: generation %d; want %d still serving", st.name, rep.Gen, lastGen)
		case !st.want.err && rep.Gen <= lastGen:
			t.Errorf("%s: generation %d; want a new one after %d", st.name, rep.Gen, lastGen)
		}
		if len(st.want.reloaded) == 0 && !slices.Equal(st.want.kinds, []string{"tools"}) && after != before {
			t.Errorf("%s: plugin a was rebuilt; want the very same *Plugin", st.name)
		}
		if st.want.err {
			var ce *config.ConfigError
			if !errors.As(rep.Err, &ce) || ce.Line != 7 {
				t.Errorf("%s: err %v; want a *ConfigError at line 7", st.name, rep.Err)
			}
		}
		lastGen = rep.Gen
	}
}

// TestManagerGoSource edits, breaks and fixes a Go-source plugin; the
// build is real, the module a stand-in (a Go guest takes ~30 s to compile
// under -race).
func TestManagerGoSource(t *testing.T) {
	needGo(t)
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "go.mod"), "module example.com/reload\n\ngo 1.24\n")
	mainGo := filepath.Join(src, "main.go")
	version := func(v string) string { return "package main\n\nfunc main() { println(\"" + v + "\") }\n" }
	write(t, mainGo, version("v1"))
	conf := filepath.Join(root, "plugins.toml")
	write(t, conf, "[[plugin]]\nname = \"g\"\nsource = \"src\"\n")

	l := NewLoader(LoaderOptions{BuildCacheDir: filepath.Join(root, "cache"), Logger: discard()})
	l.load = func(_ context.Context, _ string, wasm []byte, _ sandbox.Limits) (Module, error) {
		sum := sha256.Sum256(wasm)
		return fake{tools: []string{tool("t" + hex.EncodeToString(sum[:4]))}}.module(), nil
	}
	r := startManager(t, l, conf)
	if rep := r.next(t); rep.Err != nil || len(rep.Failures) > 0 || len(rep.Changes.Reloaded) != 1 {
		t.Fatalf("initial load: %+v", rep)
	}
	tools1, _ := r.current()

	write(t, mainGo, version("v2"))
	rep := r.next(t)
	tools2, _ := r.current()
	if got := outcomeOf(rep); !reflect.DeepEqual(got, outcome{reloaded: []string{"g"}, kinds: []string{"tools"}}) || slices.Equal(tools1, tools2) {
		t.Errorf("edit: got %+v, tools %q then %q; want g reloaded with a new tool", got, tools1, tools2)
	}

	write(t, mainGo, "package main\n\nfunc main() { nope() }\n")
	rep = r.next(t)
	var be *source.BuildError
	if len(rep.Failures) != 1 || !rep.Failures[0].Kept || !errors.As(rep.Failures[0].Err, &be) ||
		!strings.Contains(rep.Failures[0].Err.Error(), "undefined: nope") {
		t.Errorf("compile error: got %+v; want g kept, with the compiler's message", rep.Failures)
	}
	if tools, _ := r.current(); !slices.Equal(tools, tools2) || rep.Changes.Any() {
		t.Errorf("compile error: tools %q, changes %+v; want %q unchanged", tools, rep.Changes, tools2)
	}

	write(t, mainGo, version("v3"))
	rep = r.next(t)
	if got := outcomeOf(rep); !reflect.DeepEqual(got, outcome{reloaded: []string{"g"}, kinds: []string{"tools"}}) {
		t.Errorf("fix: got %+v; want g reloaded", got)
	}
}

// TestManagerNeverGivesUp starts from a broken plugins.toml: the initial
// load fails (and releases requests waiting for it), and the fix loads.
func TestManagerNeverGivesUp(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "plugins.toml")
	write(t, conf, "[[plugin]\n")
	l := NewLoader(LoaderOptions{Logger: discard()})
	l.load = func(_ context.Context, _ string, wasm []byte, _ sandbox.Limits) (Module, error) {
		return fake{tools: []string{tool(string(wasm))}}.module(), nil
	}
	r := startManager(t, l, conf)
	rep := r.next(t)
	if rep.Err == nil || !rep.Initial {
		t.Fatalf("initial load: got %+v; want a config error", rep)
	}
	select {
	case <-r.reg.Ready():
	default:
		t.Error("registry not ready after a failed initial load")
	}
	write(t, filepath.Join(root, "p.wasm"), "ok")
	write(t, conf, "[[plugin]]\nname = \"p\"\npath = \"p.wasm\"\n")
	rep = r.next(t)
	if tools, _ := r.current(); rep.Err != nil || !slices.Equal(tools, []string{"p_ok"}) {
		t.Errorf("after the fix: err %v, tools %q; want p_ok", rep.Err, tools)
	}
}

// TestManagerNoWatch loads once and returns.
func TestManagerNoWatch(t *testing.T) {
	reg := NewRegistry()
	defer reg.Close(context.Background())
	var reports []ReloadReport
	m := NewManager(ManagerOptions{
		Loader: NewLoader(LoaderOptions{Logger: discard()}), Registry: reg,
		ReadConfig: func() (*config.Config, error) {
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{native("n", fake{tools: []string{tool("t")}}.module())}
			return cfg, nil
		},
		OnReload: func(r ReloadReport) { reports = append(reports, r) },
	})
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || !reports[0].Initial || !slices.Equal(reports[0].Changes.Reloaded, []string{"n"}) {
		t.Fatalf("reports: got %+v; want one initial load of n", reports)
	}
	// Reload works without Run's watch.
	rep := m.Reload(context.Background(), []string{"manual"})
	if rep.Initial || !slices.Equal(rep.Changes.Reloaded, []string{"n"}) || rep.Changes.Tools || rep.Gen != reports[0].Gen+1 {
		t.Errorf("Reload: got %+v; want a later generation with n replaced by a new module", rep)
	}
}

func TestReloadReportLog(t *testing.T) {
	tests := []struct {
		rep  ReloadReport
		want string
	}{
		{ReloadReport{Gen: 2, Changes: Changes{Tools: true, Prompts: true, Reloaded: []string{"hash"}}, Dur: 41 * time.Millisecond},
			"INFO reloaded gen=2 plugins=[hash] changed=[tools prompts]"},
		{ReloadReport{Gen: 1, Initial: true, Changes: Changes{Resources: true, Reloaded: []string{"a", "b"}},
			Failures: []Failure{{Plugin: "c", Err: errBoom}}},
			"INFO plugins loaded gen=1 plugins=[a b] changed=[resources] failed=[c]"},
		{ReloadReport{Gen: 3, Trigger: []string{"/x/plugins.toml"}, Err: fmt.Errorf("load config: %w", errBoom)},
			"ERROR reload failed gen=3 trigger=[/x/plugins.toml] err=load config: boom"},
		{ReloadReport{Gen: 4}, "INFO reloaded gen=4 plugins=[] changed=[]"},
	}
	for _, tt := range tests {
		log, rec := logtest.New()
		tt.rep.Log(context.Background(), log)
		if got := rec.All(); len(got) != 1 || got[0] != tt.want {
			t.Errorf("Log(%+v): got %q; want [%q]", tt.rep, got, tt.want)
		}
	}
}

// TestManagerEmptySave saves plugins.toml the way many editors do,
// truncate then write, through a real watcher: the reload that sees the
// empty file keeps the generation serving and says why; the one that sees
// the content finds the config as it was. Only a file that says so (here
// only [server]) unloads every plugin.
func TestManagerEmptySave(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "plugins.toml")
	base := "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"
	write(t, conf, base)
	write(t, filepath.Join(root, "a.wasm"), string(toolModule("x")))
	r := startManager(t, NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()}), conf)
	rep := r.next(t)
	if tools, _ := r.current(); rep.Err != nil || !slices.Equal(tools, []string{"a_x"}) {
		t.Fatalf("initial load: err %v, tools %q; want a_x", rep.Err, tools)
	}
	gen := rep.Gen

	write(t, conf, "")
	rep = r.next(t)
	var ce *config.ConfigError
	if !errors.As(rep.Err, &ce) || ce.File != conf || !strings.Contains(ce.Msg, "[server]") {
		t.Errorf("0-byte plugins.toml: err %v; want a *ConfigError naming %s that says how to write no plugins", rep.Err, conf)
	}
	if tools, _ := r.current(); rep.Gen != gen || !slices.Equal(tools, []string{"a_x"}) {
		t.Errorf("0-byte plugins.toml: generation %d, tools %q; want %d still serving a_x", rep.Gen, tools, gen)
	}

	write(t, conf, base)
	rep = r.next(t)
	if tools, _ := r.current(); rep.Err != nil || len(rep.Changes.Kinds()) != 0 || !slices.Equal(tools, []string{"a_x"}) {
		t.Errorf("save completed: err %v, changed %q, tools %q; want no error, no change, a_x", rep.Err, rep.Changes.Kinds(), tools)
	}

	write(t, conf, "[server]\n")
	rep = r.next(t)
	if tools, _ := r.current(); rep.Err != nil || len(tools) != 0 {
		t.Errorf("only [server]: err %v, tools %q; want no error and no tools", rep.Err, tools)
	}
}

// blocking is a native plugin whose list_tools waits for release (or the
// end of its load's ctx): a plugin stuck building, compiling or starting.
func blocking(release <-chan struct{}, started chan<- struct{}) Module {
	return fake{tools: []string{tool("late")}, exports: map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(ctx context.Context, _ []byte) ([]byte, error) {
			started <- struct{}{}
			select {
			case <-release:
				return []byte(`{"tools":[` + tool("late") + `]}`), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}}.module()
}

// TestManagerNoPluginWaits: the fast plugin serves while the slow one is
// still loading (published, Ready still open, changes marked initial); a
// reload during the slow load applies at once, superseding it; the slow
// plugin joins when it is released, and only then is the initial load
// done.
func TestManagerNoPluginWaits(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry()
	defer reg.Close(ctx)
	changes := make(chan Changes, 16)
	defer reg.Subscribe(func(c Changes) { changes <- c })()
	release, started := make(chan struct{}), make(chan struct{}, 4)
	slow := blocking(release, started)
	fast := fake{tools: []string{tool("t")}}.module()
	extra := fake{tools: []string{tool("x")}}.module()
	var withExtra, again atomic.Bool
	release2 := make(chan struct{})
	slow2, fast2 := blocking(release2, started), fake{tools: []string{tool("t2")}}.module()
	var reports []ReloadReport
	var mu sync.Mutex
	m := NewManager(ManagerOptions{
		Loader: NewLoader(LoaderOptions{Logger: discard()}), Registry: reg,
		ReadConfig: func() (*config.Config, error) {
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{native("slow", slow), native("fast", fast)}
			if again.Load() {
				cfg.Plugins = []config.Spec{native("slow", slow2), native("fast", fast2)}
			}
			if withExtra.Load() {
				cfg.Plugins = append(cfg.Plugins, native("extra", extra))
			}
			return cfg, nil
		},
		OnReload: func(r ReloadReport) { mu.Lock(); reports = append(reports, r); mu.Unlock() },
	})
	current := func() []string {
		g, release := reg.Acquire()
		defer release()
		return toolNames(g)
	}
	ready := func() bool {
		select {
		case <-reg.Ready():
			return true
		default:
			return false
		}
	}
	first := make(chan ReloadReport, 1)
	go func() { first <- m.Reload(ctx, nil) }()
	<-started
	if c := <-changes; !c.Initial || !slices.Equal(current(), []string{"fast_t"}) || ready() {
		t.Fatalf("while slow loads: changes %+v, tools %q, ready %v; want fast_t published as initial, not ready", c, current(), ready())
	}

	withExtra.Store(true)
	second := make(chan ReloadReport, 1)
	go func() { second <- m.Reload(ctx, []string{"edit"}) }()
	if rep := <-first; !errors.Is(rep.Err, context.Canceled) {
		t.Errorf("superseded load: got %+v; want its ctx cancelled", rep)
	}
	<-started // slow loads again in the new load
	if c := <-changes; !slices.Equal(current(), []string{"extra_x", "fast_t"}) || ready() || !c.Tools {
		t.Fatalf("after the edit: changes %+v, tools %q, ready %v; want extra_x beside fast_t, not ready", c, current(), ready())
	}

	close(release)
	rep := <-second
	if c := <-changes; !c.Initial || !slices.Equal(c.Reloaded, []string{"slow"}) {
		t.Errorf("slow joining: changes %+v; want slow, initial", c)
	}
	if rep.Err != nil || !rep.Initial || !slices.Equal(rep.Changes.Reloaded, []string{"extra", "slow"}) {
		t.Errorf("final report: got %+v; want the initial load, extra and slow loaded", rep)
	}
	if got, want := current(), []string{"extra_x", "fast_t", "slow_late"}; !slices.Equal(got, want) || !ready() {
		t.Errorf("after slow loaded: tools %q, ready %v; want %q, ready", got, ready(), want)
	}
	mu.Lock()
	if len(reports) != 1 {
		t.Errorf("reports: got %d (%+v); want 1, the superseded load reporting nothing", len(reports), reports)
	}
	if fast.count(abi.ExportListTools) != 1 {
		t.Errorf("fast listed %d times; want 1 (reused by the load that superseded the first)", fast.count(abi.ExportListTools))
	}
	mu.Unlock()

	// A later reload with slow stuck: fast's new version serves once the
	// reload has settled, beside slow's previous one.
	again.Store(true)
	withExtra.Store(false)
	third := make(chan ReloadReport, 1)
	go func() { third <- m.Reload(ctx, []string{"edit again"}) }()
	<-started
	if c := <-changes; c.Initial || !slices.Equal(c.Reloaded, []string{"extra", "fast"}) ||
		!slices.Equal(current(), []string{"fast_t2", "slow_late"}) {
		t.Fatalf("reload with slow stuck: changes %+v, tools %q; want fast_t2 beside the previous slow_late, extra gone", c, current())
	}
	close(release2)
	if rep := <-third; rep.Err != nil || !slices.Equal(rep.Changes.Reloaded, []string{"extra", "fast", "slow"}) {
		t.Errorf("third report: got %+v; want extra, fast and slow reloaded", rep)
	}
}

// TestManagerWatchesPolicy: a plugin's policy file is watched like
// plugins.toml: an operator's edit applies at once, and a broken edit
// changes nothing (the last good policy keeps serving) until it is fixed.
func TestManagerWatchesPolicy(t *testing.T) {
	root := t.TempDir()
	conf, policy := filepath.Join(root, "plugins.toml"), filepath.Join(root, "policy.yaml")
	grant := func(host string) string {
		return "version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: " + host + "\n"
	}
	write(t, policy, grant("a.example"))
	write(t, conf, "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\npolicy = \"policy.yaml\"\n")
	write(t, filepath.Join(root, "a.wasm"), string(toolModule("x")))
	r := startManager(t, NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()}), conf)
	hosts := func() []string {
		_, a := r.current()
		if a == nil {
			return nil
		}
		return a.Spec.AllowedHosts
	}
	if rep := r.next(t); rep.Err != nil || !slices.Equal(hosts(), []string{"a.example"}) {
		t.Fatalf("initial load: %v, allowed_hosts %q; want a.example", rep.Err, hosts())
	}
	for _, st := range []struct {
		name, policy string
		err          bool
		want         string
	}{
		{"an edit applies", grant("b.example"), false, "b.example"},
		{"a broken edit keeps the last good policy", "permissions: [", true, "b.example"},
		{"the fix applies", grant("c.example"), false, "c.example"},
	} {
		write(t, policy, st.policy)
		rep := r.next(t)
		if (rep.Err != nil) != st.err || !slices.Contains(rep.Trigger, policy) {
			t.Errorf("%s: err %v, trigger %q; want an error %v, triggered by %s", st.name, rep.Err, rep.Trigger, st.err, policy)
		}
		if got := hosts(); !slices.Equal(got, []string{st.want}) {
			t.Errorf("%s: allowed_hosts %q; want [%s]", st.name, got, st.want)
		}
	}
}
