package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
)

// TestFileDigestCache: a plugin given by path whose file is as when it was
// hashed is listed on the next start without its code being read; what
// runs is still what was hashed. A rewrite of the same size whose
// modification time is set back is seen (its change time moved); a stale
// entry (the file changed within the timestamps' granularity) lists the
// old lists until first use, which refuses the new code, drops the entry
// and asks for a reload, after which the new code serves; a corrupt entry
// is removed and said; a file changed too recently gets no entry.
func TestFileDigestCache(t *testing.T) {
	if _, ok := cachefile.StatOf(os.Args[0]); !ok {
		t.Skip("no change times on this OS: the file digest cache is off")
	}
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	engine := newEngine(t)
	file := filepath.Join(dir, "clock.wasm")
	module := func(name string) string { return string(clockModule(name)) }
	write(t, file, module("now"))
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "clock", Path: file}}
	start := func(racy time.Duration) (*Loader, *Generation, *logtest.Recorder) { // racy: both windows
		t.Helper()
		log, rec := logtest.New()
		l, _ := countingLoader(t, listDir, engine)
		l.log, l.racy = log, cachefile.RacyWindows{Coarse: racy, Fine: racy}
		g, err := l.Build(ctx, cfg, nil)
		if err != nil || len(g.Failures) > 0 {
			t.Fatalf("Build: %v %v", err, g.Failures)
		}
		return l, g, rec
	}
	notRead := func(rec *logtest.Recorder) bool { return len(rec.Matching("DEBUG plugin code not read yet")) == 1 }
	call := func(g *Generation, tool string) (string, error) {
		out, err := g.Tool(tool).Run(ctx, nil, json.RawMessage(`{}`), abi.Context{})
		return string(out), err
	}
	entries := func() []string {
		files, _ := filepath.Glob(filepath.Join(listDir, "files", "*.json"))
		return files
	}

	// A file changed just now gets no entry: its times may not show the
	// next change.
	_, g, _ := start(time.Hour)
	g.Close(ctx)
	if got := entries(); len(got) != 0 {
		t.Fatalf("racy file: entries %v; want none", got)
	}

	// Hashed once, then listed without reading, and called.
	_, g, rec := start(0)
	g.Close(ctx)
	if notRead(rec) || len(entries()) != 1 {
		t.Fatalf("first start: not read %v, entries %v; want the file read and one entry", notRead(rec), entries())
	}
	_, g, rec = start(0)
	if !notRead(rec) || g.Tool("clock_now") == nil {
		t.Fatalf("warm start: not read %v, tool %v; want it listed from the caches unread\n%s", notRead(rec), g.Tool("clock_now"), rec.All())
	}
	if out, err := call(g, "clock_now"); err != nil || !strings.Contains(out, "now") {
		t.Fatalf("call: %q, %v", out, err)
	}
	g.Close(ctx)

	// The same size rewritten, its modification time set back: its
	// change time shows it.
	st0, _ := cachefile.StatOf(file)
	oldSum := sha256hex([]byte(module("now")))
	write(t, file, module("wow"))
	mod := time.Unix(0, st0.Mod)
	if err := os.Chtimes(file, mod, mod); err != nil {
		t.Fatal(err)
	}
	if st, _ := cachefile.StatOf(file); st.Size != st0.Size || st.Mod != st0.Mod {
		t.Fatalf("rewrite: size %d mod %d; want %d %d", st.Size, st.Mod, st0.Size, st0.Mod)
	}
	_, g, rec = start(0)
	if notRead(rec) || g.Tool("clock_wow") == nil || g.Tool("clock_now") != nil {
		t.Fatalf("same size and mtime: not read %v, wow %v, now %v; want the new code read and listed", notRead(rec), g.Tool("clock_wow"), g.Tool("clock_now"))
	}
	g.Close(ctx)

	// The hard case: the entry says the old digest for the file as it is
	// now (a rewrite within the timestamps' granularity). The old lists
	// serve until first use, which refuses the code, drops the entry and
	// asks for a reload: the next load reads the file.
	// (The list cache still holds the old code's lists.)
	st, _ := cachefile.StatOf(file)
	l, _ := countingLoader(t, listDir, engine)
	l.racy = cachefile.RacyWindows{}
	l.saveDigest(file, st, &fileDigest{Sum: oldSum, Exports: slices.Sorted(slices.Values([]string{abi.ExportABIVersion, abi.ExportCallTool, abi.ExportListTools}))})
	l, g, rec = start(0)
	if !notRead(rec) || g.Tool("clock_now") == nil {
		t.Fatalf("stale entry: not read %v, now %v; want the old lists, unread", notRead(rec), g.Tool("clock_now"))
	}
	if out, err := call(g, "clock_now"); err == nil || !strings.Contains(err.Error(), "changed since the plugin was listed") {
		t.Fatalf("first use of changed code: %q, %v; want it refused", out, err)
	}
	if got := l.signals.takeStale(); !slices.Equal(got, []string{file}) || len(entries()) != 0 {
		t.Fatalf("stale: reload asked for %v, entries %v; want [%s] and the entry dropped", got, entries(), file)
	}
	g.Close(ctx)
	_, g, rec = start(0)
	if notRead(rec) || g.Tool("clock_wow") == nil {
		t.Fatalf("after the stale entry: not read %v, wow %v; want the new code read and listed", notRead(rec), g.Tool("clock_wow"))
	}
	if out, err := call(g, "clock_wow"); err != nil || !strings.Contains(out, "wow") {
		t.Fatalf("call: %q, %v", out, err)
	}
	g.Close(ctx)

	// A corrupt entry is removed and said; the file is read.
	for _, e := range entries() {
		if err := os.WriteFile(e, []byte(`{"format":1,"sha256":"`+oldSum+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, g, rec = start(0)
	g.Close(ctx)
	if warns := rec.Matching("WARN file digest cache entry failed its check"); len(warns) != 1 || notRead(rec) || g.Tool("clock_wow") == nil {
		t.Fatalf("corrupt entry: warnings %v, not read %v; want one warning and the file read\n%s", warns, notRead(rec), rec.All())
	}
	if _, g, rec = start(0); !notRead(rec) {
		t.Errorf("after the corrupt entry was replaced: the file was read again")
	}
	g.Close(ctx)
}

// TestFileDigestStaleReload: under a Manager following lists, a plugin
// listed from a stale file digest entry is reloaded when its first use
// finds other code, and the new code's lists serve (a list change).
func TestFileDigestStaleReload(t *testing.T) {
	if _, ok := cachefile.StatOf(os.Args[0]); !ok {
		t.Skip("no change times on this OS: the file digest cache is off")
	}
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	engine := newEngine(t)
	file := filepath.Join(dir, "clock.wasm")
	module := clockModule
	write(t, file, string(module("now")))
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "clock", Path: file}}
	// The caches know the old code; the entry says the file as it is now
	// holds it (a rewrite within the timestamps' granularity).
	l, _ := countingLoader(t, listDir, engine)
	l.racy = cachefile.RacyWindows{}
	g, err := l.Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("Build: %v %v", err, g.Failures)
	}
	g.Close(ctx)
	write(t, file, string(module("wow")))
	st, _ := cachefile.StatOf(file)
	l.saveDigest(file, st, &fileDigest{Sum: sha256hex(module("now")), Exports: []string{abi.ExportCallTool, abi.ExportListTools}})

	l, _ = countingLoader(t, listDir, engine)
	reg := NewRegistry()
	defer reg.Close(ctx)
	reports := make(chan ReloadReport, 16)
	m := NewManager(ManagerOptions{Loader: l, Registry: reg, FollowLists: true, Debounce: 20 * time.Millisecond, Logger: discard(),
		ReadConfig: func() (*config.Config, error) { return cfg, nil },
		OnReload:   func(rep ReloadReport) { reports <- rep }})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(rctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func() ReloadReport { return nextReport(t, reports) }
	if rep := next(); !rep.Initial || rep.Err != nil {
		t.Fatalf("initial load: %+v", rep)
	}
	run := func(name string) (string, error) {
		g, release := reg.Acquire()
		defer release()
		tl := g.Tool(name)
		if tl == nil {
			return "", fmt.Errorf("no tool %q", name)
		}
		out, err := tl.Run(ctx, nil, json.RawMessage(`{}`), abi.Context{})
		return string(out), err
	}
	if _, err := run("clock_now"); err == nil || !strings.Contains(err.Error(), "changed since the plugin was listed") {
		t.Fatalf("first use of the stale listing: %v; want the changed code refused", err)
	}
	rep := next()
	if rep.Err != nil || !slices.Equal(rep.Trigger, []string{file}) || !rep.Changes.Tools {
		t.Fatalf("reload: %+v; want one triggered by %s that changed the tools", rep, file)
	}
	if out, err := run("clock_wow"); err != nil || !strings.Contains(out, "wow") {
		t.Fatalf("after the reload: %q, %v; want the new code", out, err)
	}
}

// clockModule is the plugin of the file digest cache's tests: one tool,
// name, whose call answers its name.
func clockModule(name string) []byte {
	one := int32(abi.Version)
	return wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool(name) + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[{"type":"text","text":"` + name + `"}]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)
}
