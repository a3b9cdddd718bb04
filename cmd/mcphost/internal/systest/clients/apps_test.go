package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/plugins"
)

// TestAppsBrowser renders MCP Apps (SEP-1865) served by mcphost in a real
// browser: headless Chromium (Debian's) loads a host page built from the
// official SDKs (the TypeScript client over Streamable HTTP, and ext-apps'
// AppBridge; internal/tools/apps), which calls the palette tool of
// examples/palette, reads its ui:// page and renders it in a sandboxed
// iframe under the CSP of the resource's _meta.ui.csp. The app shows the
// tool's structured result; its button calls the mix tool through the
// bridge, and the test reads what the app shows and compares it with the
// same call made by the host. Two plugins run the same code: one whose
// page the guest serves (guest.Tool.UI), one whose page plugins.toml
// names ([plugin.ui]); each is rendered in both protocol eras.
//
// scripts/apps-browser.sh installs chromium and the npm packages; without
// them the test skips, or fails under CI=true. The screenshots go to
// $MCPHOST_APPS_SCREENSHOTS (a directory; default the test's temp dir).
func TestAppsBrowser(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "internal", "tools", "apps"))
	if err != nil {
		t.Fatal(err)
	}
	chromium := os.Getenv("MCPHOST_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	node, nerr := exec.LookPath("node")
	var missing []string
	if nerr != nil {
		missing = append(missing, "node")
	}
	if !fileExists(chromium) {
		missing = append(missing, chromium)
	}
	for _, p := range []string{"@modelcontextprotocol/ext-apps", "@modelcontextprotocol/client", "playwright-core", "esbuild"} {
		if !fileExists(filepath.Join(dir, "node_modules", p)) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("missing %s: run scripts/apps-browser.sh", strings.Join(missing, ", "))
		}
		t.Skipf("missing %s: run scripts/apps-browser.sh", strings.Join(missing, ", "))
	}
	if testing.Short() {
		t.Skip("runs mcphost serve and headless Chromium")
	}
	shots := os.Getenv("MCPHOST_APPS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	example, err := filepath.Abs(filepath.Join("..", "..", "examples", "palette"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	toml := "[[plugin]]\nname = \"palette\"\nsource = " + systest.Quote(example) + "\n\n" +
		"[[plugin]]\nname = \"shades\"\nsource = " + systest.Quote(example) + "\n" +
		"[plugin.ui]\ntools = { palette = \"app.html\" }\ncsp_connect = [\"https://api.example.com\"]\n"
	if err := os.WriteFile(conf, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, systest.Binary(t), "serve", "--config", conf, "--no-watch", "--http", "127.0.0.1:0")
	errR, errW := io.Pipe()
	srv.Stderr = errW
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = srv.Wait(); errW.Close() }()
	url, loaded := serveProgress(errR)
	select {
	case <-loaded: // both plugins built from source and loaded
	case <-ctx.Done():
		t.Fatal("mcphost did not report its generation built")
	}
	mcp := <-url

	cases := []struct {
		plugin, era, uri string
		csp              string // the _meta.ui.csp the host reads
	}{
		{"palette", "2025-11-25", "ui://palette/app.html", `{}`},
		{"palette", "2026-07-28", "ui://palette/app.html", `{}`},
		{"shades", "2025-11-25", plugins.AppURI("shades", "app.html"), `{"connectDomains":["https://api.example.com"]}`},
		{"shades", "2026-07-28", plugins.AppURI("shades", "app.html"), `{"connectDomains":["https://api.example.com"]}`},
	}
	for _, c := range cases {
		t.Run(c.plugin+"/"+c.era, func(t *testing.T) {
			shot := filepath.Join(shots, "apps-"+c.plugin+"-"+c.era+".png")
			cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "run.mjs"), "--mcp", mcp, "--era", c.era,
				"--tool", c.plugin+"_palette", "--args", `{"base":"#336699","steps":5}`, "--click-tool", c.plugin+"_mix",
				"--screenshot", shot)
			cmd.Env = append(os.Environ(), "MCPHOST_CHROMIUM="+chromium)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("run.mjs: %v\n%s", err, stderr.String())
			}
			var got struct {
				Error   string
				Console []string
				Report  struct {
					ProtocolVersion  string
					ServerExtensions map[string]struct{ MimeTypes []string }
					ResourceURI      string
					Listed           struct{ MimeType string }
					MimeType         string
					CSP              json.RawMessage
					Policy, Sandbox  string
					ToolResult       struct {
						Base   string
						Shades []string
					}
					AppInfo struct{ Name string }
				}
				Swatches      []string
				Status, Mixed string
				Direct        struct{ Hex string }
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("run.mjs printed %q: %v\n%s", out, err, stderr.String())
			}
			if got.Error != "" {
				t.Fatalf("in the browser: %s\nconsole:\n%s", got.Error, strings.Join(got.Console, "\n"))
			}
			r := got.Report
			if r.ProtocolVersion != c.era {
				t.Errorf("negotiated %q; want %s", r.ProtocolVersion, c.era)
			}
			if ext := r.ServerExtensions[plugins.AppExtension]; len(ext.MimeTypes) != 1 || ext.MimeTypes[0] != plugins.AppMIME {
				t.Errorf("server capabilities.extensions = %+v; want %s with mimeTypes [%s]", r.ServerExtensions, plugins.AppExtension, plugins.AppMIME)
			}
			if r.ResourceURI != c.uri || r.MimeType != plugins.AppMIME || r.Listed.MimeType != plugins.AppMIME {
				t.Errorf("tool's page %q read as %q (listed as %q); want %s as %s", r.ResourceURI, r.MimeType, r.Listed.MimeType, c.uri, plugins.AppMIME)
			}
			if string(r.CSP) != c.csp {
				t.Errorf("resource _meta.ui.csp = %s; want %s", r.CSP, c.csp)
			}
			if r.Sandbox != "allow-scripts" || !strings.Contains(r.Policy, "default-src 'none'") {
				t.Errorf("iframe sandbox %q, policy %q; want an opaque-origin sandbox under a deny-by-default CSP", r.Sandbox, r.Policy)
			}
			if r.AppInfo.Name != "palette" {
				t.Errorf("app introduced itself as %+v; want palette (ui/initialize through the AppBridge)", r.AppInfo)
			}
			// What the app shows is the tool's structured result.
			if len(r.ToolResult.Shades) != 5 || strings.Join(got.Swatches, " ") != strings.Join(r.ToolResult.Shades, " ") {
				t.Errorf("app shows swatches %q; want the tool's shades %q", got.Swatches, r.ToolResult.Shades)
			}
			// The button called mix through the bridge: the app shows what
			// the same call answers the host.
			if want := "mixed by " + c.plugin + "_mix"; got.Status != want || got.Direct.Hex == "" || got.Mixed != got.Direct.Hex {
				t.Errorf("after the click the app says %q and shows %q; want %q and the host's own call's %q\nconsole:\n%s",
					got.Status, got.Mixed, want, got.Direct.Hex, strings.Join(got.Console, "\n"))
			}
			checkPNG(t, shot)
			t.Logf("screenshot: %s", shot)
		})
	}
}

// serveProgress reads mcphost's stderr: the URL of its listening line,
// and a close of loaded once the first generation is built.
func serveProgress(r io.Reader) (url <-chan string, loaded <-chan struct{}) {
	u := make(chan string, 1)
	l := make(chan struct{})
	go func() {
		re := regexp.MustCompile(`msg=listening addr=(http://127\.0\.0\.1:[0-9]+/mcp)`)
		sc := bufio.NewScanner(r)
		built := false
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				u <- m[1]
			}
			if !built && strings.Contains(sc.Text(), `msg="generation built"`) {
				built = true
				close(l)
			}
		}
	}()
	return u, l
}

func checkPNG(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	if s := img.Bounds().Size(); s.X < 300 || s.Y < 200 {
		t.Errorf("screenshot %s is %v; want the page", file, s)
	}
}
