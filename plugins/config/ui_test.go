package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseConfigUI(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "plugins", "ui"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := []byte("<!doctype html><p>hi</p>")
	if err := os.WriteFile(filepath.Join(dir, "plugins", "ui", "view.html"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	// A page that links out of the plugin's directory, and one too big
	// (sparse: it takes no disk, and must take no memory either).
	secret := filepath.Join(dir, "credentials")
	if err := os.WriteFile(secret, []byte("aws_secret_access_key = hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "plugins", "ui", "show.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins", "ui", "big.html"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "plugins", "ui", "big.html"), 1<<30); err != nil {
		t.Fatal(err)
	}
	head := "[[plugin]]\nname = \"weather\"\npath = \"plugins/weather.wasm\"\n[plugin.ui]\n"
	tests := []struct {
		name, src string
		err       string // a substring of the error, "" for none
	}{
		{"two tools share a page", head + `tools = { show = "ui/view.html", map = "./ui/view.html" }
csp_connect = ["https://api.example.com", "wss://live.example.com:8443"]
csp_resources = ["https://*.cdn.example.com"]
csp_frames = []
csp_base_uri = ["https://example.com/"]
`, ""},
		{"missing page", head + "tools = { show = \"ui/nope.html\" }\n", `plugins.toml:5: plugin "weather": key "ui.tools.show": page ` + filepath.Join(dir, "plugins", "ui", "nope.html") + ` does not exist`},
		{"page outside the directory", head + "tools = { show = \"../secret.html\" }\n", `key "ui.tools.show": page "../secret.html": want a file name inside the plugin's directory`},
		{"absolute page", head + "tools = { show = \"/etc/passwd\" }\n", `want a file name inside the plugin's directory`},
		{"a directory", head + "tools = { show = \"ui\" }\n", `not a regular file`},
		{"page linked out of the directory", head + "tools = { show = \"ui/show.html\" }\n", `key "ui.tools.show": page: ` + filepath.Join(dir, "plugins", "ui", "show.html") + ` leads outside ` + filepath.Join(dir, "plugins")},
		{"page too big", head + "tools = { show = \"ui/big.html\" }\n", `key "ui.tools.show": page: ` + filepath.Join(dir, "plugins", "ui", "big.html") + ` is 1073741824 bytes, more than the limit of 4 MiB`},
		{"unknown key", head + "csp_conect = [\"https://a.example\"]\n", `key "ui.csp_conect": unknown key (did you mean "csp_connect"?)`},
		{"far unknown key", head + "pages = {}\n", `key "ui.pages": unknown key (want tools, csp_connect`},
		{"not a table", "[[plugin]]\nname = \"weather\"\npath = \"plugins/weather.wasm\"\nui = \"view.html\"\n", `key "ui": want a table`},
		{"origin with a path", head + "csp_connect = [\"https://api.example.com/v1\"]\n", `key "ui.csp_connect": element 0 "https://api.example.com/v1": want an origin like "https://api.example.com": a scheme and a host, no path`},
		{"directive injection", head + "csp_connect = [\"https://a.example; script-src *\"]\n", `no spaces, quotes, commas or semicolons`},
		{"no scheme", head + "csp_resources = [\"cdn.example.com\"]\n", `scheme https, http, wss or ws`},
		{"inner wildcard", head + "csp_frames = [\"https://a.*.example.com\"]\n", `a wildcard may only start the host`},
		{"tool map of numbers", head + "tools = { show = 3 }\n", `page ` + filepath.Join(dir, "plugins", "3") + ` does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig(filepath.Join(dir, "plugins.toml"), []byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v; want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ui := cfg.Plugins[0].UI
			if ui == nil || ui.Tools["show"] != "ui/view.html" || ui.Tools["map"] != "ui/view.html" || len(ui.Pages) != 1 {
				t.Fatalf("ui = %+v; want show and map on ui/view.html", ui)
			}
			p := ui.Pages["ui/view.html"]
			if p.File != filepath.Join(dir, "plugins", "ui", "view.html") || string(p.HTML) != string(page) {
				t.Errorf("page = %s %q; want the file's bytes", p.File, p.HTML)
			}
			if !slices.Equal(ui.CSP.Connect, []string{"https://api.example.com", "wss://live.example.com:8443"}) ||
				!slices.Equal(ui.CSP.Resource, []string{"https://*.cdn.example.com"}) || len(ui.CSP.Frame) != 0 ||
				!slices.Equal(ui.CSP.BaseURI, []string{"https://example.com/"}) {
				t.Errorf("csp = %+v", ui.CSP)
			}
			if w := cfg.WatchPaths(); !slices.Contains(w, p.File) {
				t.Errorf("WatchPaths = %v; want the page watched", w)
			}
		})
	}
}
