package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// weatherApp is a plugin with two tools, show (with a _meta of its own)
// and mix, and a page it serves itself that asks for an outside origin.
func weatherApp() map[string]native {
	return map[string]native{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"show","inputSchema":{"type":"object"},"_meta":{"x":1,"ui":{"visibility":["model","app"]}}},{"name":"mix","inputSchema":{"type":"object"}}]}`), nil
		},
		abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"content":[{"type":"text","text":"ok"}]}`), nil
		},
		abi.ExportListResources: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"resources":[{"uri":"ui://guest/page.html","name":"page","mimeType":"text/html;profile=mcp-app"}]}`), nil
		},
		abi.ExportReadResource: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"contents":[{"uri":"ui://guest/page.html","mimeType":"text/html;profile=mcp-app","text":"<p>guest</p>","_meta":{"ui":{"csp":{"connectDomains":["https://evil.example"]},"prefersBorder":true}}}]}`), nil
		},
	}
}

func weatherSpec(mod plugins.Module, html string, ui bool) config.Spec {
	s := config.Spec{Name: "weather", Native: mod}
	if ui {
		s.UI = &config.UI{
			Tools: map[string]string{"show": "ui/view.html"},
			Pages: map[string]config.UIPage{"ui/view.html": {File: "/plugins/ui/view.html", HTML: []byte(html)}},
			CSP:   config.UICSP{Connect: []string{"https://api.example.com"}},
		}
	}
	return s
}

// TestAppsServed: a [plugin.ui] page is listed and read as an MCP App with
// the config's CSP, its tool names it in _meta.ui.resourceUri, a page the
// guest serves gets the same CSP (under the plugin's ui:// namespace),
// and the extension is declared; in both eras.
func TestAppsServed(t *testing.T) {
	reg := plugins.NewRegistry()
	t.Cleanup(func() { reg.Close(context.Background()) })
	reg.Swap(context.Background(), buildGeneration(t, weatherSpec(plugins.NativeModule(weatherApp()), "<p>v1</p>", true)))
	srv := New(reg, Options{Logger: quietLog})
	defer srv.Close()
	const uri = "ui://weather/ui/view.html"
	const csp = `{"connectDomains":["https://api.example.com"]}`

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			c := startClient(t, srv)
			meta := ""
			if era == "2026-07-28" {
				meta = meta2026(`{}`)
				c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{%s}}`, meta)
				meta = "," + meta
			} else {
				c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"t","version":"1"}}}`, era)
			}
			var caps struct {
				Capabilities struct {
					Extensions map[string]json.RawMessage
				}
			}
			if w := c.next(); json.Unmarshal(w.Result, &caps) != nil || string(caps.Capabilities.Extensions[plugins.AppExtension]) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
				t.Fatalf("handshake: got %s; want extensions[%s] with its MIME type", w.raw, plugins.AppExtension)
			}
			if era == "2025-11-25" {
				c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}

			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{%s}}`, strings.TrimPrefix(meta, ","))
			var tools struct {
				Tools []struct {
					Name string
					Meta json.RawMessage `json:"_meta"`
				}
			}
			w := c.next()
			if err := json.Unmarshal(w.Result, &tools); err != nil {
				t.Fatalf("tools/list: %s", w.raw)
			}
			got := map[string]string{}
			for _, tl := range tools.Tools {
				got[tl.Name] = string(tl.Meta)
			}
			if want := `{"ui":{"resourceUri":"` + uri + `","visibility":["model","app"]},"x":1}`; got["weather_show"] != want || got["weather_mix"] != "" {
				t.Errorf("tools' _meta = %v; want show's %s (its own members kept) and none on mix", got, want)
			}

			c.send(`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{%s}}`, strings.TrimPrefix(meta, ","))
			w = c.next()
			if want := `{"uri":"` + uri + `","name":"ui/view.html","description":"MCP App of plugin weather","mimeType":"text/html;profile=mcp-app","size":9,"_meta":{"ui":{"csp":` + csp + `}}}`; !strings.Contains(string(w.Result), want) {
				t.Errorf("resources/list = %s; want the entry %s", w.Result, want)
			}

			// The guest's ui://guest/page.html is served under its
			// plugin's namespace, and answered under that URI.
			const guestPage = "ui://weather/guest/page.html"
			reads := []struct{ uri, text string }{{uri, "<p>v1</p>"}, {guestPage, "<p>guest</p>"}}
			for i, r := range reads {
				c.send(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q%s}}`, 10+i, r.uri, meta)
				var res struct {
					Contents []struct {
						URI, MimeType, Text string
						Meta                struct {
							UI map[string]json.RawMessage
						} `json:"_meta"`
					}
				}
				w := c.next()
				if err := json.Unmarshal(w.Result, &res); err != nil || len(res.Contents) != 1 {
					t.Fatalf("read %s: %s", r.uri, w.raw)
				}
				ct := res.Contents[0]
				if ct.URI != r.uri || ct.MimeType != plugins.AppMIME || ct.Text != r.text || string(ct.Meta.UI["csp"]) != csp {
					t.Errorf("read %s = %s; want %q as %s with the config's csp %s", r.uri, w.Result, r.text, plugins.AppMIME, csp)
				}
				if r.uri == guestPage && string(ct.Meta.UI["prefersBorder"]) != "true" {
					t.Errorf("read %s: the guest's other _meta.ui members are lost: %s", r.uri, w.Result)
				}
			}
		})
	}
}

// TestAppsReload: a page edited on disk (the same module) is news to its
// subscribers; a [plugin.ui] table taken away changes the tool and the
// resource lists.
func TestAppsReload(t *testing.T) {
	mod := plugins.NativeModule(weatherApp())
	l := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog})
	build := func(prev *plugins.Generation, html string, ui bool) *plugins.Generation {
		cfg := config.DefaultConfig()
		cfg.Plugins = []config.Spec{weatherSpec(mod, html, ui)}
		g, err := l.Build(context.Background(), cfg, prev)
		if err != nil || len(g.Failures) > 0 {
			t.Fatalf("build: %v %v", err, g.Failures)
		}
		return g
	}
	reg := plugins.NewRegistry()
	t.Cleanup(func() { reg.Close(context.Background()) })
	g1 := build(nil, "<p>v1</p>", true)
	reg.Swap(context.Background(), g1)
	srv := New(reg, Options{Logger: quietLog})
	defer srv.Close()
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"ui://weather/ui/view.html"}}`)
	c.next()

	g2 := build(g1, "<p>v2</p>", true)
	ch := reg.Swap(context.Background(), g2)
	if ch.Tools || ch.Resources || len(ch.Reloaded) != 0 || strings.Join(ch.Updated, " ") != "ui://weather/ui/view.html" {
		t.Fatalf("page edited: changes %+v; want only the page updated (same size, same module)", ch)
	}
	if w := c.next(); w.Method != "notifications/resources/updated" || !strings.Contains(string(w.Params), "ui://weather/ui/view.html") {
		t.Fatalf("page edited: got %s; want resources/updated for the page", w.raw)
	}

	ch = reg.Swap(context.Background(), build(g2, "", false))
	if !ch.Tools || !ch.Resources {
		t.Fatalf("[plugin.ui] removed: changes %+v; want the tool and resource lists changed", ch)
	}
	got := map[string]bool{}
	for range 3 { // both lists, and the page's subscriber hears it is gone
		got[c.next().Method] = true
	}
	for _, m := range []string{"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/resources/updated"} {
		if !got[m] {
			t.Errorf("[plugin.ui] removed: got %v; want %s", got, m)
		}
	}
}

// TestAppsUnknownTool: a [plugin.ui] tool the plugin does not list fails
// the plugin's load, with a "did you mean".
func TestAppsUnknownTool(t *testing.T) {
	spec := weatherSpec(plugins.NativeModule(weatherApp()), "<p/>", true)
	spec.UI.Tools = map[string]string{"shwo": "ui/view.html", "chart": "ui/view.html"}
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{spec}
	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	want := `[plugin.ui] tools: plugin "weather" has no tool "chart" (it lists show, mix)` + "\n" +
		`[plugin.ui] tools: plugin "weather" has no tool "shwo" (did you mean "show"?)`
	if len(g.Failures) != 1 || g.Failures[0].Err.Error() != want || len(g.Plugins) != 0 {
		t.Fatalf("failures %v, plugins %d; want weather failed with\n%s", g.Failures, len(g.Plugins), want)
	}
}
