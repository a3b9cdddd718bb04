package plugins

import (
	"bytes"
	"context"
	"encoding/json"
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
