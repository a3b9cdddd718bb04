package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/sandbox"
)

// TestBuildKeepsPrevious checks that a plugin whose new version fails keeps
// serving its previous version, and that nothing else is kept.
func TestBuildKeepsPrevious(t *testing.T) {
	ctx := context.Background()
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Logger: log})
	trap := func(context.Context, []byte) ([]byte, error) { panic("list exploded") }

	a1 := fake{tools: []string{tool("x")}}.module()
	b1 := fake{tools: []string{tool("y")}}.module()
	gone := fake{tools: []string{tool("z")}}.module()
	g1 := build(t, l, nil, native("a", a1), native("b", b1), native("gone", gone))

	a2 := fake{exports: map[string]func(context.Context, []byte) ([]byte, error){abi.ExportListTools: trap}}.module()
	b2 := fake{tools: []string{tool("y2")}}.module()
	c := fake{exports: map[string]func(context.Context, []byte) ([]byte, error){abi.ExportListTools: trap}}.module()
	g2 := build(t, l, g1, native("a", a2), native("b", b2), native("c", c))

	if got, want := toolNames(g2), []string{"a_x", "b_y2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools: got %q; want %q (a kept, b replaced, gone dropped, c absent)", got, want)
	}
	if g2.Plugin("a") != g1.Plugin("a") {
		t.Error("the kept plugin is not the previous *Plugin")
	}
	type failure struct {
		plugin string
		kept   bool
	}
	var got []failure
	for _, f := range g2.Failures {
		got = append(got, failure{f.Plugin, f.Kept})
		var ce *sandbox.CallError
		if !errors.As(f.Err, &ce) || ce.Kind != sandbox.KindTrap {
			t.Errorf("failure %s: got %v; want the trap", f.Plugin, f.Err)
		}
	}
	if want := []failure{{"a", true}, {"c", false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("failures: got %+v; want %+v", got, want)
	}
	if got := rec.Matching("ERROR plugin failed plugin=a "); len(got) != 1 || !strings.Contains(got[0], "kept=true") {
		t.Errorf("log of a: got %q; want one error with kept=true", got)
	}
	if c := Diff(g1, g2); !c.Tools || !reflect.DeepEqual(c.Reloaded, []string{"b", "gone"}) {
		t.Errorf("Diff: got %+v; want tools changed and b, gone reloaded (a kept)", c)
	}
	if _, err := g2.Tool("a_x").Run(ctx, nil, nil, abi.Context{}); err != nil {
		t.Errorf("call of the kept tool: %v", err)
	}

	// The fix is applied; a kept plugin can be kept again meanwhile.
	g3 := build(t, l, g2, native("a", a2), native("b", b2))
	if g3.Plugin("a") != g1.Plugin("a") || len(g3.Failures) != 1 || !g3.Failures[0].Kept {
		t.Errorf("second failure: got plugin %p, failures %+v; want the first version kept again", g3.Plugin("a"), g3.Failures)
	}
	a3 := fake{tools: []string{tool("x3")}}.module()
	g4 := build(t, l, g3, native("a", a3), native("b", b2))
	if got, want := toolNames(g4), []string{"a_x3", "b_y2"}; !reflect.DeepEqual(got, want) || len(g4.Failures) != 0 {
		t.Errorf("after the fix: tools %q, failures %v; want %q and none", got, g4.Failures, want)
	}

	// Every module closes exactly once, when the last generation holding
	// it closes; the failed ones are the caller's and stay open.
	for _, g := range []*Generation{g1, g2, g3, g4} {
		if err := g.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for name, m := range map[string]*fakeModule{"a1": a1, "b1": b1, "gone": gone, "b2": b2, "a3": a3} {
		if n := m.closes.Load(); n != 1 {
			t.Errorf("%s closed %d times; want 1", name, n)
		}
	}
	for name, m := range map[string]*fakeModule{"a2": a2, "c": c} {
		if n := m.closes.Load(); n != 0 {
			t.Errorf("failed module %s closed %d times; want 0", name, n)
		}
	}
}

// TestBuildKeepsPreviousSpec checks that a kept plugin runs under its old
// spec, since the new spec belongs to the version that failed.
func TestBuildKeepsPreviousSpec(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.wasm")
	write(t, file, "good")
	l := NewLoader(LoaderOptions{Logger: discard()})
	l.load = func(_ context.Context, _ string, wasm []byte, _ sandbox.Limits) (Module, error) {
		if string(wasm) != "good" {
			return nil, errors.New("bad module")
		}
		return fake{tools: []string{tool("t")}}.module(), nil
	}
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "p", Path: file}}
	g1, err := l.Build(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close(context.Background())

	prefix := "new_"
	write(t, file, "broken")
	cfg2 := config.DefaultConfig()
	cfg2.Plugins = []config.Spec{{Name: "p", Path: file, ToolPrefix: &prefix, SHA256: strings.Repeat("0", 64)}}
	g2, err := l.Build(context.Background(), cfg2, g1)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(context.Background())
	var ce *source.ChecksumError
	if len(g2.Failures) != 1 || !errors.As(g2.Failures[0].Err, &ce) || !g2.Failures[0].Kept {
		t.Fatalf("failures: got %+v; want a kept checksum mismatch", g2.Failures)
	}
	if got := toolNames(g2); !reflect.DeepEqual(got, []string{"p_t"}) || g2.Config != cfg2 {
		t.Errorf("tools %q, config %p; want [p_t] under the old spec and the new config %p", got, g2.Config, cfg2)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
}

func TestDropInNames(t *testing.T) {
	tests := []struct{ file, want string }{
		{"hash.wasm", "hash"},
		{"my plugin v2.wasm", "my_plugin_v2"},
		{"_under.wasm", "under"},
		{"-x.y.wasm", "x_y"},
		{"héllo.wasm", "h__llo"},
		{strings.Repeat("a", 40) + ".wasm", strings.Repeat("a", 32)},
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, "[server]\nplugin_dir = \"d\"\n")
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tt := range tests {
		write(t, filepath.Join(dir, "d", tt.file), "")
		want = append(want, tt.want+"="+tt.file)
	}
	write(t, filepath.Join(dir, "d", ".hidden.wasm"), "") // an editor's temporary file
	cfg, err := config.LoadConfig(file)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	got := map[string]bool{}
	for _, s := range cfg.Plugins {
		got[s.Name+"="+filepath.Base(s.Path)] = true
		if s.AllowedHosts != nil || s.AllowedPaths != nil || s.Env != nil || s.Config != nil {
			t.Errorf("drop-in %s: got %+v; want a deny-all sandbox", s.Name, s)
		}
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("plugins %v lack %s", got, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d plugins; want %d (hidden file skipped)", len(got), len(want))
	}

	write(t, filepath.Join(dir, "d", "--.wasm"), "")
	if _, err := config.LoadConfig(file); err == nil || !strings.Contains(err.Error(), `drop-in plugin name "--" is invalid`) {
		t.Errorf("a name of only punctuation: got %v; want an invalid name error", err)
	}
}
