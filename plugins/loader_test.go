package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/sandbox"
)

func TestBuildMergesAndNames(t *testing.T) {
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Logger: log})
	empty, custom := "", "h-"
	a := fake{
		tools:     []string{tool("sha256"), tool("md5"), tool("debug_dump")},
		resources: []string{resource("mem://a/1"), resource("mem://shared")},
		templates: []string{template("mem://a/{id}")},
		prompts:   []string{prompt("greet"), prompt("summarize")},
	}.module()
	b := fake{
		tools:     []string{tool("a_sha256"), tool("echo")},
		resources: []string{resource("mem://shared"), resource("mem://b/1")},
		prompts:   []string{prompt("greet")},
	}.module()
	c := fake{tools: []string{tool("echo"), tool("sha256")}}.module()
	d := fake{tools: []string{tool("x")}}.module()

	g := build(t, l, nil,
		config.Spec{Name: "a", Native: a, ExcludeTools: []string{"debug_*"}},
		config.Spec{Name: "b", Native: b, ToolPrefix: &empty},
		config.Spec{Name: "c", Native: c, ToolPrefix: &empty, IncludeTools: []string{"echo"}},
		config.Spec{Name: "d", Native: d, ToolPrefix: &custom},
	)
	defer g.Close(context.Background())

	// a's "sha256" is "a_sha256"; b's own "a_sha256" collides and gets _2;
	// c's "echo" collides with b's; c's sha256 is not included.
	if got, want := toolNames(g), []string{"a_md5", "a_sha256", "a_sha256_2", "echo", "echo_2", "h-x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	for _, tt := range []struct{ name, plugin, original string }{
		{"a_sha256", "a", "sha256"}, {"a_sha256_2", "b", "a_sha256"}, {"echo", "b", "echo"}, {"echo_2", "c", "echo"}, {"h-x", "d", "x"},
	} {
		tl := g.Tool(tt.name)
		if tl == nil || tl.Plugin.Name != tt.plugin || tl.Original != tt.original {
			t.Errorf("Tool(%q) = %+v; want plugin %q original %q", tt.name, tl, tt.plugin, tt.original)
			continue
		}
		if tl.Plugin.Tool(tt.original) != tl {
			t.Errorf("Plugin(%q).Tool(%q) is not g.Tool(%q)", tt.plugin, tt.original, tt.name)
		}
		if want := `"name":"` + tt.name + `"`; !strings.Contains(string(tl.Raw), want) {
			t.Errorf("Tool(%q).Raw = %s; want it to contain %s", tt.name, tl.Raw, want)
		}
	}
	if tl := g.Tool("a_debug_dump"); tl != nil {
		t.Errorf("excluded tool a_debug_dump is exposed")
	}
	if got := g.Plugin("a").Tool("debug_dump"); got != nil {
		t.Errorf("Plugin(a).Tool(debug_dump) = %v; want nil (excluded)", got)
	}
	if got, want := names(g.Prompts, func(p *Prompt) string { return p.Name + "@" + p.Plugin.Name }),
		[]string{"greet@a", "greet_2@b", "summarize@a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("prompts: got %q; want %q", got, want)
	}
	if p := g.Prompt("greet_2"); p == nil || p.Def.Name != "greet" || !strings.Contains(string(p.Raw), `"greet_2"`) {
		t.Errorf("Prompt(greet_2) = %+v; want b's greet renamed", p)
	}
	if got, want := names(g.Resources, func(r *Resource) string { return r.Def.URI + "@" + r.Plugin.Name }),
		[]string{"mem://a/1@a", "mem://b/1@b", "mem://shared@a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("resources: got %q; want %q", got, want)
	}
	if r := g.Resource("mem://shared"); r == nil || r.Plugin.Name != "a" {
		t.Errorf("Resource(mem://shared) = %+v; want plugin a (first in config order)", r)
	}
	if tpl, vars := g.MatchTemplate("mem://a/42"); tpl == nil || vars["id"] != "42" {
		t.Errorf("MatchTemplate(mem://a/42) = %v, %v; want a's template with id=42", tpl, vars)
	}
	for _, want := range []string{
		"WARN tool name collision tool=a_sha256 plugin=b other=a name=a_sha256_2",
		"WARN tool name collision tool=echo plugin=c other=b name=echo_2",
		"WARN prompt name collision prompt=greet plugin=b other=a name=greet_2",
		"WARN duplicate resource uri=mem://shared plugin=b other=a",
	} {
		if got := rec.Matching(want); len(got) != 1 {
			t.Errorf("log: got %d records %q; want one", len(got), want)
		}
	}
	for _, p := range g.Plugins {
		if p.ABI != 2 {
			t.Errorf("plugin %s: ABI %d; want 2", p.Name, p.ABI)
		}
	}
}

func TestBuildSkipsBadItems(t *testing.T) {
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Logger: log})
	m := fake{
		tools: []string{
			tool("good"),
			`{"description":"no name","inputSchema":{"type":"object"}}`,
			`{"name":"noschema"}`,
			`{"name":"notobject","inputSchema":{"type":"string"}}`,
			`{"name":"array","inputSchema":[]}`,
			`{"name":"badschema","inputSchema":{"type":"object","properties":{"a":{"type":"nosuchtype"}}}}`,
			`{"name":"badout","inputSchema":{"type":"object"},"outputSchema":{"type":"object","minProperties":-1}}`,
			`{"name":"remote","inputSchema":{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}}`,
			`{"name":"badtype","inputSchema":{"type":"object"},"annotations":"oops"}`,
			tool("good"),
			`{"name":"withdraft7","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{}}}`,
		},
		resources: []string{resource("mem://ok"), `{"name":"nouri"}`, `{"uri":"mem://noname"}`},
		templates: []string{template("mem://{a}"), template("mem://{?q}"), `{"uriTemplate":"mem://x/{a}"}`},
		prompts:   []string{prompt("p"), `{"name":""}`, `{"name":"q","arguments":[{"description":"no name"}]}`},
	}.module()
	strict := true
	spec := native("p", m)
	spec.StrictSchemas = &strict
	g := build(t, l, nil, spec)
	defer g.Close(context.Background())
	if got, want := toolNames(g), []string{"p_good", "p_withdraft7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	if len(g.Resources) != 1 || len(g.Templates) != 2 || len(g.Prompts) != 1 {
		t.Errorf("got %d resources, %d templates, %d prompts; want 1, 2 (one unmatchable), 1",
			len(g.Resources), len(g.Templates), len(g.Prompts))
	}
	wantSkips := []string{
		"WARN tool skipped plugin=p tool= index=1 err=missing name",
		"WARN tool skipped plugin=p tool=noschema index=2 err=missing inputSchema",
		`WARN tool skipped plugin=p tool=notobject index=3 err=inputSchema: want "type": "object"`,
		"WARN tool skipped plugin=p tool=array index=4 err=inputSchema: want a JSON object, got an array",
		"WARN tool skipped plugin=p tool=badschema index=5 err=inputSchema:",
		"WARN tool skipped plugin=p tool=badout index=6 err=outputSchema:",
		"WARN tool skipped plugin=p tool=remote index=7 err=inputSchema:",
		"WARN tool skipped plugin=p tool=badtype index=8 err=invalid tool:",
		"WARN tool skipped plugin=p tool=good index=9 err=listed twice",
		"WARN resource skipped plugin=p resource= index=1 err=missing uri",
		"WARN resource skipped plugin=p resource=mem://noname index=2 err=missing name",
		"WARN template skipped plugin=p template=mem://x/{a} index=2 err=missing name",
		"WARN template cannot be matched plugin=p template=mem://{?q}",
		"WARN prompt skipped plugin=p prompt= index=1 err=missing name",
		"WARN prompt skipped plugin=p prompt=q index=2 err=an argument has no name",
	}
	for _, w := range wantSkips {
		if got := rec.Matching(w); len(got) != 1 {
			t.Errorf("log: got %q; want one record starting %q", got, w)
		}
	}
	if got := rec.Matching("WARN tool skipped plugin=p tool=remote"); len(got) == 1 && !strings.Contains(got[0], "not allowed") {
		t.Errorf("remote $ref: got %q; want the refusal to be explained", got[0])
	}
}

// TestLenientSchemas: without strict_schemas, a tool whose schema does not
// compile as JSON Schema is listed exactly as declared, with one warning,
// and its arguments reach the plugin unchecked; a schema that is not an
// object schema still keeps the tool out, because clients reject it.
func TestLenientSchemas(t *testing.T) {
	// A real Zig servlet declares "required" inside "properties".
	zig := `{"name":"get","description":"by id","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"required":["id"]}}}`
	badOut := `{"name":"badout","inputSchema":{"type":"object"},"outputSchema":{"type":"object","minProperties":-1}}`
	tests := []struct {
		name      string
		server    bool  // [server] strict_schemas
		plugin    *bool // the plugin's strict_schemas
		wantTools []string
		wantWarns int
	}{
		{"lenient by default", false, nil, []string{"p_badout", "p_get", "p_good"}, 2},
		{"strict server", true, nil, []string{"p_good"}, 0},
		{"plugin overrides strict server", true, ptr(false), []string{"p_badout", "p_get", "p_good"}, 2},
		{"strict plugin", false, ptr(true), []string{"p_good"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, rec := logtest.New()
			l := NewLoader(LoaderOptions{Logger: log})
			m := fake{tools: []string{tool("good"), zig, badOut, `{"name":"str","inputSchema":{"type":"string"}}`}}.module()
			spec := native("p", m)
			spec.StrictSchemas = tt.plugin
			cfg := config.DefaultConfig()
			cfg.Server.StrictSchemas = tt.server
			cfg.Plugins = []config.Spec{spec}
			g, err := l.Build(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(context.Background())
			if got := toolNames(g); !reflect.DeepEqual(got, tt.wantTools) {
				t.Errorf("tools: got %q; want %q", got, tt.wantTools)
			}
			if got := g.Plugin("p").Warnings(); len(got) != tt.wantWarns {
				t.Errorf("warnings: got %q; want %d", got, tt.wantWarns)
			}
			if got := rec.Matching("WARN tool schema not valid"); len(got) != tt.wantWarns {
				t.Errorf("log: got %q; want %d warnings", got, tt.wantWarns)
			}
			if got := rec.Matching("WARN tool skipped plugin=p tool=str"); len(got) != 1 {
				t.Errorf("log: got %q; want the non-object schema skipped", got)
			}
			tl := g.Tool("p_get")
			if tl == nil {
				return
			}
			if want := strings.Replace(zig, `"get"`, `"p_get"`, 1); string(tl.Raw) != want {
				t.Errorf("raw: got %s; want it exactly as declared (but namespaced) %s", tl.Raw, want)
			}
			if err := tl.validateArguments(json.RawMessage(`{"id":5}`)); err != nil {
				t.Errorf("validateArguments: got %v; want none for a tool served without validation", err)
			}
			if w := g.Plugin("p").Warnings(); len(w) > 0 && !strings.Contains(strings.Join(w, " "), `tool "get"`) {
				t.Errorf("warnings %q do not name the tool", w)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestBuildFailuresAreIsolated(t *testing.T) {
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Logger: log})
	dir := t.TempDir()
	wasm := filepath.Join(dir, "x.wasm")
	write(t, wasm, "\x00asm\x01\x00\x00\x00")
	trap := func(context.Context, []byte) ([]byte, error) { panic("guest exploded") }
	specs := []config.Spec{
		native("good", fake{tools: []string{tool("t")}}.module()),
		native("noabi", NativeModule(map[string]func(context.Context, []byte) ([]byte, error){"hello": echoCall})),
		native("traps", fake{exports: map[string]func(context.Context, []byte) ([]byte, error){abi.ExportListTools: trap}}.module()),
		native("badjson", fake{exports: map[string]func(context.Context, []byte) ([]byte, error){
			abi.ExportListTools: func(context.Context, []byte) ([]byte, error) { return []byte(`{"tools":`), nil }}}.module()),
		native("notarray", fake{exports: map[string]func(context.Context, []byte) ([]byte, error){
			abi.ExportListPrompts: func(context.Context, []byte) ([]byte, error) { return []byte(`{"prompts":{}}`), nil }}}.module()),
		{Name: "missing", Path: filepath.Join(dir, "missing.wasm")},
		{Name: "pinned", Path: wasm, SHA256: strings.Repeat("0", 64)},
		{Name: "noengine", Path: wasm},
		{Name: "bad name!", Native: fake{}.module()},
		native("good", fake{}.module()),
	}
	g := build(t, l, nil, specs...)
	defer g.Close(context.Background())
	if got := names(g.Plugins, func(p *Plugin) string { return p.Name }); !reflect.DeepEqual(got, []string{"good"}) {
		t.Errorf("loaded: got %q; want [good]", got)
	}
	want := map[string]string{
		"noabi":     `unknown ABI: exports ["hello"]`,
		"traps":     "list_tools: native: list_tools: trap: panic: guest exploded",
		"badjson":   "list_tools: output is not a JSON object",
		"notarray":  `list_prompts: "prompts" is not an array`,
		"missing":   "read: open " + filepath.Join(dir, "missing.wasm") + ": no such file or directory",
		"pinned":    "sha256 mismatch for " + wasm + ": config pins 0000",
		"noengine":  "no sandbox engine",
		"bad name!": `invalid plugin name "bad name!"`,
		"good":      `duplicate plugin name "good"`,
	}
	if len(g.Failures) != len(want) {
		t.Errorf("got %d failures %v; want %d", len(g.Failures), g.Failures, len(want))
	}
	for _, f := range g.Failures {
		w, ok := want[f.Plugin]
		if !ok || !strings.HasPrefix(f.Err.Error(), w) {
			t.Errorf("failure %q: got %q; want it to start with %q", f.Plugin, f.Err, w)
		}
		if got := rec.Matching("ERROR plugin failed plugin=" + f.Plugin + " "); len(got) == 0 {
			t.Errorf("failure %q was not logged as an error", f.Plugin)
		}
	}
	var ce *source.ChecksumError
	if err := g.Failed("pinned"); !errors.As(err, &ce) {
		t.Errorf("Failed(pinned) = %v; want a *ChecksumError", err)
	}
	var call *sandbox.CallError
	if err := g.Failed("traps"); !errors.As(err, &call) || call.Kind != sandbox.KindTrap {
		t.Errorf("Failed(traps) = %v; want a trap *sandbox.CallError", err)
	}
}

func TestBuildV1(t *testing.T) {
	l := NewLoader(LoaderOptions{Logger: discard()})
	m := fake{v1: true, tools: []string{tool("time")}}.module()
	g := build(t, l, nil, native("servlet", m))
	defer g.Close(context.Background())
	p := g.Plugin("servlet")
	if p == nil || p.ABI != 1 {
		t.Fatalf("plugin = %+v; want ABI 1", p)
	}
	if got := m.input(abi.ExportDescribe); got != "" {
		t.Errorf("describe input: got %q; want empty", got)
	}
	out, err := p.callTool(context.Background(), "time", []byte(`{"tz":"UTC"}`), abi.Context{ID: []byte("7")}, false)
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got, want := m.input(abi.ExportCall), `{"params":{"name":"time","arguments":{"tz":"UTC"}}}`; got != want {
		t.Errorf("call input: got %s; want %s", got, want)
	}
	if !strings.Contains(string(out.JSON), `"content"`) {
		t.Errorf("CallTool output: got %s; want a CallToolResult", out.JSON)
	}
	if _, err := p.getPrompt(context.Background(), "x", nil, abi.Context{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetPrompt on v1: got %v; want ErrNotFound", err)
	}
	if _, err := p.readResource(context.Background(), "x://y", abi.Context{}); !errors.Is(err, ErrNotSupported) ||
		!errors.Is(err, sandbox.ErrMissingExport) {
		t.Errorf("ReadResource on v1: got %v; want ErrNotSupported and sandbox.ErrMissingExport", err)
	}
}

// versionModule reports an ABI version through CallI32, like *sandbox.Module.
type versionModule struct {
	*fakeModule
	version int32
}

func (m versionModule) HasExport(name string) bool {
	return name == abi.ExportABIVersion || m.fakeModule.HasExport(name)
}

func (m versionModule) CallI32(context.Context, string) (int32, error) { return m.version, nil }

func TestBuildGuestVersion(t *testing.T) {
	l := NewLoader(LoaderOptions{Logger: discard()})
	g := build(t, l, nil, native("v", versionModule{fake{tools: []string{tool("t")}}.module(), abi.Version}),
		native("plain", fake{tools: []string{tool("t")}}.module()))
	defer g.Close(context.Background())
	if got := g.Plugin("v").GuestVersion; got != abi.Version {
		t.Errorf("GuestVersion: got %d; want %d", got, abi.Version)
	}
	if got := g.Plugin("plain").GuestVersion; got != 0 {
		t.Errorf("GuestVersion without the export: got %d; want 0", got)
	}
}

func TestBuildReuse(t *testing.T) {
	ctx := context.Background()
	l := NewLoader(LoaderOptions{Logger: discard()})
	a := fake{tools: []string{tool("x"), tool("y")}, resources: []string{resource("mem://a")}}.module()
	b := fake{tools: []string{tool("z")}, templates: []string{template("mem://b/{n}")}}.module()
	g1 := build(t, l, nil, native("a", a), native("b", b))

	// Same config: the very same plugins, no new list calls.
	g2 := build(t, l, g1, native("a", a), native("b", b))
	if g1.Plugin("a") != g2.Plugin("a") || g1.Plugin("b") != g2.Plugin("b") {
		t.Errorf("unchanged plugins were not reused")
	}
	if got := a.count(abi.ExportListTools); got != 1 {
		t.Errorf("list_tools calls: got %d; want 1 (reused)", got)
	}
	if c := Diff(g1, g2); c.Any() || c.Tools || c.Resources || c.Prompts {
		t.Errorf("Diff of identical generations: got %+v; want nothing", c)
	}
	if g2.ID <= g1.ID {
		t.Errorf("generation IDs: got %d then %d; want increasing", g1.ID, g2.ID)
	}

	// A filter change: the module is shared, the *Plugin is new, tools changed.
	g3 := build(t, l, g2, config.Spec{Name: "a", Native: a, ExcludeTools: []string{"y"}}, native("b", b))
	if g3.Plugin("a") == g2.Plugin("a") || g3.Plugin("a").core != g2.Plugin("a").core {
		t.Errorf("filter change: want a new *Plugin on the same core")
	}
	if c := Diff(g2, g3); !c.Tools || c.Resources || c.Prompts || len(c.Reloaded) != 0 {
		t.Errorf("Diff after a filter change: got %+v; want only Tools", c)
	}

	// A new module for b: reloaded, its resources updated.
	b2 := fake{tools: []string{tool("z")}, templates: []string{template("mem://b/{n}")}}.module()
	g4 := build(t, l, g3, config.Spec{Name: "a", Native: a, ExcludeTools: []string{"y"}}, native("b", b2))
	want := Changes{Reloaded: []string{"b"}, Updated: []string{"mem://b/{n}"}}
	if c := Diff(g3, g4); !reflect.DeepEqual(c, want) {
		t.Errorf("Diff after replacing b: got %+v; want %+v", c, want)
	}

	// Modules close only when the last generation holding them closes.
	for i, g := range []*Generation{g1, g2, g3} {
		if err := g.Close(ctx); err != nil {
			t.Fatalf("Close g%d: %v", i+1, err)
		}
	}
	if a.closes.Load() != 0 || b.closes.Load() != 1 || b2.closes.Load() != 0 {
		t.Errorf("after closing g1-g3: closes a=%d b=%d b2=%d; want 0 1 0", a.closes.Load(), b.closes.Load(), b2.closes.Load())
	}
	_ = g4.Close(ctx)
	_ = g4.Close(ctx) // idempotent
	if a.closes.Load() != 1 || b2.closes.Load() != 1 {
		t.Errorf("after closing g4: closes a=%d b2=%d; want 1 1", a.closes.Load(), b2.closes.Load())
	}
}

func TestBuildReusePathPlugin(t *testing.T) {
	// With a loader function standing in for the engine, a .wasm file that
	// did not change is not loaded again; a changed one is.
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "p.wasm")
	write(t, file, "v1")
	var loads []*fakeModule
	l := NewLoader(LoaderOptions{Logger: discard()})
	l.load = func(_ context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
		m := fake{tools: []string{tool(string(wasm))}}.module()
		loads = append(loads, m)
		return m, nil
	}
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "p", Path: file}}
	g1, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := l.Build(ctx, cfg, g1)
	if err != nil {
		t.Fatal(err)
	}
	if len(loads) != 1 || g1.Plugin("p") != g2.Plugin("p") {
		t.Errorf("unchanged file: got %d loads; want 1 and the same plugin", len(loads))
	}
	write(t, file, "v2")
	g3, err := l.Build(ctx, cfg, g2)
	if err != nil {
		t.Fatal(err)
	}
	if len(loads) != 2 || !slices.Equal(toolNames(g3), []string{"p_v2"}) {
		t.Errorf("changed file: got %d loads and tools %q; want 2 and [p_v2]", len(loads), toolNames(g3))
	}
	if c := Diff(g2, g3); !c.Tools || !slices.Equal(c.Reloaded, []string{"p"}) {
		t.Errorf("Diff: got %+v; want tools changed and p reloaded", c)
	}
	cfg2 := config.DefaultConfig()
	cfg2.Plugins = []config.Spec{{Name: "p", Path: file, MemoryPages: 100}}
	g4, err := l.Build(ctx, cfg2, g3)
	if err != nil {
		t.Fatal(err)
	}
	if len(loads) != 3 {
		t.Errorf("changed limits: got %d loads; want 3", len(loads))
	}
	for _, g := range []*Generation{g1, g2, g3, g4} {
		_ = g.Close(ctx)
	}
	for i, m := range loads {
		if n := m.closes.Load(); n != 1 {
			t.Errorf("module %d closed %d times; want 1", i, n)
		}
	}
}

func TestBuildCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l := NewLoader(LoaderOptions{Logger: discard()})
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{native("a", fake{tools: []string{tool("t")}}.module())}
	g, err := l.Build(ctx, cfg, nil)
	if g != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Build with a canceled context: got %v, %v; want nil, context.Canceled", g, err)
	}
}

func TestBuildRealFileMissingSHA(t *testing.T) {
	// A pinned file with the right sum passes the check and reaches the
	// (missing) engine.
	dir := t.TempDir()
	file := filepath.Join(dir, "x.wasm")
	write(t, file, "abc")
	l := NewLoader(LoaderOptions{Logger: discard()})
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "x", Path: file,
		SHA256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}} // sha256("abc")
	g, err := l.Build(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Failed("x"); err == nil || !strings.Contains(err.Error(), "no sandbox engine") {
		t.Errorf("got %v; want the checksum to pass and the load to need an engine", err)
	}
	_ = os.Remove(file)
}

// TestBusyNamesQueuedPlugins: while every CPU's slot is taken by a load,
// the plugins waiting for one are listed as queued, so a startup warning
// names every plugin the first lists go out without.
func TestBusyNamesQueuedPlugins(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := runtime.NumCPU() + 2
	cfg := config.DefaultConfig()
	for i := range n {
		file := filepath.Join(dir, fmt.Sprintf("p%d.wasm", i))
		write(t, file, fmt.Sprint("v", i))
		cfg.Plugins = append(cfg.Plugins, config.Spec{Name: fmt.Sprint("p", i), Path: file})
	}
	started := make(chan struct{}, n)
	release := make(chan struct{})
	l := NewLoader(LoaderOptions{Logger: discard()})
	l.load = func(_ context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
		started <- struct{}{}
		<-release
		return fake{tools: []string{tool(string(wasm))}}.module(), nil
	}
	built := make(chan *Generation, 1)
	go func() {
		g, err := l.Build(ctx, cfg, nil)
		if err != nil {
			t.Error(err)
		}
		built <- g
	}()
	for range runtime.NumCPU() {
		<-started
	}
	var compiling, queued int
	for _, b := range l.Busy() {
		switch {
		case strings.HasSuffix(b, "(compile)"):
			compiling++
		case strings.HasSuffix(b, "(queued)"):
			queued++
		}
	}
	if compiling != runtime.NumCPU() || queued != n-runtime.NumCPU() {
		t.Errorf("Busy() = %q; want %d compiling and %d queued", l.Busy(), runtime.NumCPU(), n-runtime.NumCPU())
	}
	close(release)
	g := <-built
	if g != nil && len(g.Failures) > 0 {
		t.Errorf("failures: %+v", g.Failures)
	}
	if got := l.Busy(); len(got) != 0 {
		t.Errorf("Busy() after the build = %q; want none", got)
	}
	if g != nil {
		_ = g.Close(ctx)
	}
}
