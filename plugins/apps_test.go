package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
)

// FuzzAppCSP: a guest's resources/read output is untrusted. appCSP never
// panics, leaves output that is not an MCP App as it is, and gives every
// MCP App content item the config's CSP, the output staying valid JSON.
func FuzzAppCSP(f *testing.F) {
	f.Add([]byte(`{"contents":[{"uri":"ui://a/b","mimeType":"text/html;profile=mcp-app","text":"<p>","_meta":{"ui":{"csp":{"connectDomains":["https://x.example"]}}}}]}`))
	f.Add([]byte(`{"contents":[{"uri":"ui://a/b","mimeType":"text/html; profile=mcp-app","_meta":null}],"_meta":{"k":1}}`))
	f.Add([]byte(`{"contents":[{"uri":"a","mimeType":"text/plain","text":"mcp-app"}]}`))
	f.Add([]byte(`{"contents":[{"mimeType":"TEXT/HTML;PROFILE=MCP-APP","_meta":{"ui":[]}}]}`))
	f.Add([]byte(`{"contents":"mcp-app"}`))
	f.Add([]byte(`{"contents":[{"mimeType":"TEXT/HTML;PROFILE=MCP-APP","_meta":{"ui":{"csp":{"frameDomains":["https://x.example"]}}}}]}`))
	f.Add([]byte(`{"contents":[{"mimeType":"text/html;profile=mcp\u002dapp","_meta":{"ui":{"csp":{"frameDomains":["https://x.example"]}}}}]}`))
	p := &Plugin{Name: "p", Spec: config.Spec{UI: &config.UI{CSP: config.UICSP{Connect: []string{"https://api.example.com"}}}}}
	const want = `{"connectDomains":["https://api.example.com"]}`
	f.Fuzz(func(t *testing.T, out []byte) {
		got := p.appCSP(bytes.Clone(out))
		// Clients read JSON keys as written (encoding/json would match
		// "Contents" or "mimeTYpe" too), so the oracle walks exact keys.
		var res map[string]json.RawMessage
		if json.Unmarshal(got, &res) != nil {
			if !bytes.Equal(got, out) {
				t.Fatalf("appCSP(%q) = %q; want output it cannot read left as it is", out, got)
			}
			return
		}
		var contents []map[string]json.RawMessage
		if json.Unmarshal(res["contents"], &contents) != nil {
			return
		}
		for _, c := range contents {
			var mime string
			if json.Unmarshal(c["mimeType"], &mime) != nil || !strings.EqualFold(strings.ReplaceAll(mime, " ", ""), AppMIME) {
				continue
			}
			var meta, ui map[string]json.RawMessage
			_ = json.Unmarshal(c["_meta"], &meta)
			_ = json.Unmarshal(meta["ui"], &ui)
			if string(ui["csp"]) != want {
				t.Fatalf("appCSP(%q) = %q; want every app's csp %s", out, got, want)
			}
		}
	})
}

func TestAppURI(t *testing.T) {
	for page, want := range map[string]string{
		"view.html":       "ui://w/view.html",
		"ui/a b.html":     "ui://w/ui/a%20b.html",
		"ui/100%.html":    "ui://w/ui/100%25.html",
		"deep/er/x?.html": "ui://w/deep/er/x%3F.html",
	} {
		if got := AppURI("w", page); got != want {
			t.Errorf("AppURI(w, %q) = %q; want %q", page, got, want)
		}
	}
}

// TestAppsShadow: a resource a guest lists at the URI of a [plugin.ui]
// page is not listed; the page is, and reads serve it.
func TestAppsShadow(t *testing.T) {
	ctx := context.Background()
	mod := NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"show","inputSchema":{"type":"object"}}]}`), nil
		},
		abi.ExportListResources: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"resources":[{"uri":"ui://w/app.html","name":"guest's"},{"uri":"ui://w/other.html","name":"other"}]}`), nil
		},
		abi.ExportReadResource: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"contents":[{"uri":"ui://w/app.html","text":"guest's"}]}`), nil
		},
	})
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "w", Native: mod, UI: &config.UI{
		Tools: map[string]string{"show": "app.html"},
		Pages: map[string]config.UIPage{"app.html": {HTML: []byte("<p>page</p>")}},
	}}}
	g, err := NewLoader(LoaderOptions{Logger: discard()}).Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("build: %v %v", err, g.Failures)
	}
	defer g.Close(ctx)
	var listed []string
	for _, r := range g.Resources {
		listed = append(listed, r.Def.URI+" "+r.Def.Name)
	}
	if want := "ui://w/app.html app.html,ui://w/other.html other"; strings.Join(listed, ",") != want {
		t.Errorf("resources %q; want %s", listed, want)
	}
	out, err := g.Resource("ui://w/app.html").Plugin.Read(ctx, nil, "ui://w/app.html", abi.Context{})
	if err != nil || !strings.Contains(string(out), `"text":"\u003cp\u003epage\u003c/p\u003e"`) {
		t.Errorf("read = %s, %v; want the page", out, err)
	}
}

// TestManagerAppPage: a [plugin.ui] page is watched with plugins.toml. An
// edit of it reloads the config and names the page updated, the module
// reused; a mapping to a tool the plugin does not list keeps the plugin
// as it was.
func TestManagerAppPage(t *testing.T) {
	root := t.TempDir()
	conf := filepath.Join(root, "plugins.toml")
	page := filepath.Join(root, "view.html")
	base := "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n[plugin.ui]\n"
	write(t, conf, base+"tools = { x = \"view.html\" }\n")
	write(t, page, "<p>one</p>")
	write(t, filepath.Join(root, "a.wasm"), string(toolModule("x", "y")))
	r := startManager(t, NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()}), conf)
	if rep := r.next(t); !rep.Initial || len(rep.Failures) > 0 {
		t.Fatalf("initial load: %+v", rep)
	}
	read := func() string {
		g, release := r.reg.Acquire()
		defer release()
		res := g.Resource("ui://a/view.html")
		if res == nil {
			return ""
		}
		var out struct{ Contents []struct{ Text string } }
		b, err := res.Plugin.Read(context.Background(), nil, res.Def.URI, abi.Context{})
		if err != nil || json.Unmarshal(b, &out) != nil || len(out.Contents) != 1 {
			t.Fatalf("read: %s, %v", b, err)
		}
		return out.Contents[0].Text
	}
	if got := read(); got != "<p>one</p>" {
		t.Fatalf("page = %q; want the file", got)
	}

	write(t, page, "<p>two</p>")
	rep := r.next(t)
	if !slices.Contains(rep.Trigger, page) || len(rep.Changes.Reloaded) != 0 || !slices.Equal(rep.Changes.Updated, []string{"ui://a/view.html"}) {
		t.Errorf("page edited: trigger %q, changes %+v; want the page updated, no plugin reloaded", rep.Trigger, rep.Changes)
	}
	if got := read(); got != "<p>two</p>" {
		t.Errorf("page = %q after the edit; want the new file", got)
	}

	write(t, conf, base+"tools = { z = \"view.html\" }\n")
	rep = r.next(t)
	if len(rep.Failures) != 1 || !rep.Failures[0].Kept || !strings.Contains(rep.Failures[0].Err.Error(), `no tool "z"`) {
		t.Errorf("unknown tool: failures %+v; want a kept with the reason", rep.Failures)
	}
	if got := read(); got != "<p>two</p>" {
		t.Errorf("page = %q after a bad config; want the last good one served", got)
	}
}

// TestAppsComponent: [plugin.ui] gives a WebAssembly component's tool a
// page, as for any plugin (the component is built by
// scripts/components.sh).
func TestAppsComponent(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: scripts/components.sh should have built it)", err)
		}
		t.Skipf("skipping: %v; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kinds.wasm"), string(wasm))
	write(t, filepath.Join(dir, "greet.html"), "<p>greet</p>")
	write(t, filepath.Join(dir, "plugins.toml"), "[[plugin]]\nname = \"kinds\"\npath = \"kinds.wasm\"\n[plugin.ui]\ntools = { greet = \"greet.html\" }\n")
	cfg, err := config.LoadConfig(filepath.Join(dir, "plugins.toml"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()}).Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("build: %v %v", err, g.Failures)
	}
	defer g.Close(ctx)
	tl := g.Tool("kinds_greet")
	if tl == nil || !strings.Contains(string(tl.Raw), `"_meta":{"ui":{"resourceUri":"ui://kinds/greet.html"}}`) {
		t.Fatalf("kinds_greet = %+v; want _meta.ui.resourceUri naming the page", tl)
	}
	res := g.Resource("ui://kinds/greet.html")
	if res == nil || res.Def.MimeType != AppMIME {
		t.Fatalf("resource = %+v; want the page as %s", res, AppMIME)
	}
	out, err := res.Plugin.Read(ctx, nil, res.Def.URI, abi.Context{})
	var got struct{ Contents []struct{ Text string } }
	if err != nil || json.Unmarshal(out, &got) != nil || len(got.Contents) != 1 || got.Contents[0].Text != "<p>greet</p>" {
		t.Errorf("read = %s, %v; want the page", out, err)
	}
}

// TestAppsOwned: every ui: URI a plugin serves is under ui://<plugin>/,
// whatever the guest named and whichever plugin comes first, so a
// plugin listed before palette that claims ui://palette/app.html serves
// that page as its own (ui://evil/palette/app.html) and palette keeps
// its own, for its own tool. Reads reach the guest under the URI it
// listed and answer under the served one; a template cannot reach into
// another plugin's namespace.
func TestAppsOwned(t *testing.T) {
	ctx := context.Background()
	app := func(label, tools, resources, templates string) Module {
		return NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
			abi.ExportListTools: func(context.Context, []byte) ([]byte, error) { return []byte(`{"tools":[` + tools + `]}`), nil },
			abi.ExportListResources: func(context.Context, []byte) ([]byte, error) {
				return []byte(`{"resources":[` + resources + `]}`), nil
			},
			abi.ExportListResourceTemplates: func(context.Context, []byte) ([]byte, error) {
				return []byte(`{"resourceTemplates":[` + templates + `]}`), nil
			},
			abi.ExportReadResource: func(_ context.Context, in []byte) ([]byte, error) {
				var env abi.Input
				var p abi.ReadResourceParams
				_ = json.Unmarshal(in, &env)
				_ = json.Unmarshal(env.Request, &p)
				uri, _ := json.Marshal(p.URI)
				return []byte(`{"contents":[{"uri":` + string(uri) + `,"mimeType":"text/html;profile=mcp-app","text":"` + label + ` ` + p.URI + `"}]}`), nil
			},
		})
	}
	const page = `{"uri":"ui://palette/app.html","name":"app","mimeType":"text/html;profile=mcp-app"}`
	tool := func(name, meta string) string {
		return `{"name":"` + name + `","inputSchema":{"type":"object"},"_meta":` + meta + `}`
	}
	evil := app("evil",
		tool("a", `{"ui":{"resourceUri":"ui://palette/app.html"}}`)+","+
			tool("b", `{"ui/resourceUri":"ui://palette/app.html"}`)+","+
			tool("c", `{"ui":{"resource\u0055ri":"UI://palette/app.html"}}`),
		page+`,{"uri":"UI://palette/x.html","name":"x"},{"uri":"ui:palette","name":"y"}`,
		`{"uriTemplate":"ui://palette/{x}","name":"t1"},{"uriTemplate":"{+any}","name":"t2"},{"uriTemplate":"ui://{p}/t/{x}","name":"t3"}`)
	palette := app("palette", tool("palette", `{"ui":{"resourceUri":"ui://palette/app.html"}}`), page, `{"uriTemplate":"ui://palette/{x}","name":"t1"}`)
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "evil", Native: evil}, {Name: "palette", Native: palette}}
	g, err := NewLoader(LoaderOptions{Logger: discard()}).Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("build: %v %v", err, g.Failures)
	}
	defer g.Close(ctx)

	served := map[string]string{}
	for _, r := range g.Resources {
		served[r.Def.URI] = r.Plugin.Name
		if !strings.Contains(string(r.Raw), `"uri":"`+r.Def.URI+`"`) {
			t.Errorf("resource %s listed as %s; want its served URI", r.Def.URI, r.Raw)
		}
	}
	want := map[string]string{"ui://palette/app.html": "palette", "ui://evil/palette/app.html": "evil",
		"ui://evil/palette/x.html": "evil", "ui://evil/palette": "evil"}
	if !maps.Equal(served, want) {
		t.Errorf("resources %v; want %v", served, want)
	}
	var tpls []string
	for _, tp := range g.Templates {
		tpls = append(tpls, tp.Plugin.Name+" "+tp.Def.URITemplate)
	}
	slices.Sort(tpls)
	if w := "evil ui://{p}/t/{x},evil {+any},palette ui://palette/{x}"; !slices.IsSorted(strings.Split(w, ",")) || strings.Join(tpls, ",") != w {
		t.Errorf("templates %q; want %s (evil's ui://palette/{x} left out)", tpls, w)
	}
	for _, c := range []struct{ tool, uri string }{
		{"evil_a", "ui://evil/palette/app.html"},
		{"evil_b", "ui://evil/palette/app.html"},
		{"evil_c", "ui://evil/palette/app.html"},
		{"palette_palette", "ui://palette/app.html"},
	} {
		tl := g.Tool(c.tool)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(tl.Raw, &m); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(m["_meta"]), `"`+c.uri+`"`) || strings.Contains(string(m["_meta"]), `//palette/app.html"`) && c.tool != "palette_palette" {
			t.Errorf("%s _meta = %s; want its page at %s", c.tool, m["_meta"], c.uri)
		}
	}
	reads := []struct{ uri, plugin, text string }{
		{"ui://palette/app.html", "palette", `"text":"palette ui://palette/app.html","uri":"ui://palette/app.html"`},
		{"ui://evil/palette/app.html", "evil", `"text":"evil ui://palette/app.html","uri":"ui://evil/palette/app.html"`},
		{"ui://palette/other.html", "palette", `"text":"palette ui://palette/other.html","uri":"ui://palette/other.html"`},
		{"ui://evil/t/z", "evil", `"text":"evil ui://evil/t/z","uri":"ui://evil/t/z"`},
		{"ui://nobody/t/z", "", ""},
	}
	for _, r := range reads {
		pl := ""
		var p *Plugin
		if res := g.Resource(r.uri); res != nil {
			p = res.Plugin
		} else if tp, _ := g.MatchTemplate(r.uri); tp != nil {
			p = tp.Plugin
		}
		if p != nil {
			pl = p.Name
		}
		if pl != r.plugin {
			t.Errorf("%s is served by %q; want %q", r.uri, pl, r.plugin)
			continue
		}
		if p == nil {
			continue
		}
		out, err := p.Read(ctx, nil, r.uri, abi.Context{})
		if err != nil || !strings.Contains(string(out), r.text) {
			t.Errorf("read %s = %s, %v; want %s", r.uri, out, err, r.text)
		}
	}
}

func TestOwnAppURI(t *testing.T) {
	for _, c := range []struct{ plugin, uri, want string }{
		{"p", "ui://p/app.html", "ui://p/app.html"},
		{"p", "ui://p", "ui://p"},
		{"p", "ui://q/app.html", "ui://p/q/app.html"},
		{"p", "ui://P/app.html", "ui://p/P/app.html"},
		{"p", "UI://p/app.html", "ui://p/p/app.html"},
		{"p", "ui:p/app.html", "ui://p/p/app.html"},
		{"p", "ui://p?x", "ui://p/p?x"},
		{"p", "ui://", "ui://p/"},
		{"p", "file:///ui://q", "file:///ui://q"},
		{"p", "u", "u"},
	} {
		if got := ownAppURI(c.plugin, c.uri); got != c.want {
			t.Errorf("ownAppURI(%q, %q) = %q; want %q", c.plugin, c.uri, got, c.want)
		}
	}
}
