package clients

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// TestInspectorCLI drives `mcphost serve` with the MCP Inspector's CLI
// (@modelcontextprotocol/inspector, pinned in internal/tools/ts and
// installed by scripts/ts-sdk.sh), as a person checking a server from
// outside would: its --strict schema-portability check over every tool of
// the examples and the conformance plugin, a tool call in each protocol
// era over stdio and Streamable HTTP, logging in each era and transport,
// a resource read and a prompt, its
// SEP-2640 --verify of the conformance plugin's skill (digests and
// sizes), and its --app-info probe of the palette example's MCP App.
// Without node or the Inspector it skips, unless CI=true.
func TestInspectorCLI(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "internal", "tools", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	inspector := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	_, nerr := exec.LookPath("node")
	systest.RequireTool(t, "node or the MCP Inspector is missing (scripts/ts-sdk.sh installs it)", nerr == nil && fileExists(inspector))
	if testing.Short() {
		t.Skip("runs mcphost serve under the Inspector")
	}
	bin := systest.Binary(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	conformance := filepath.Join(root, "examples", "conformance")
	palette := t.TempDir()
	if err := os.WriteFile(filepath.Join(palette, "plugins.toml"),
		[]byte("[[plugin]]\nname = \"palette\"\nsource = "+systest.Quote(filepath.Join(root, "examples", "palette"))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// run runs the Inspector's CLI on args and returns its stdout; a
	// non-zero exit fails the test with its stderr.
	run := func(t *testing.T, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(inspector, append([]string{"--cli", "-q"}, args...)...)
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
		}
		return stdout.Bytes()
	}
	sum := sha256.Sum256([]byte("hi"))
	wantHex := hex.EncodeToString(sum[:])
	// checkHash checks a call's result; a 2026-07-28 result (the
	// "modern" era) names the server in its _meta, a 2025-11-25 one does
	// not.
	checkHash := func(t *testing.T, era string, out []byte) {
		t.Helper()
		var res struct {
			Meta struct {
				ServerInfo *struct{ Name string } `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Hex string `json:"hex"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.IsError || res.StructuredContent.Hex != wantHex {
			t.Errorf("hash_sha256 of \"hi\": got %s (%v); want hex %s", out, err, wantHex)
		}
		if modern := res.Meta.ServerInfo != nil && res.Meta.ServerInfo.Name == "mcphost"; modern != (era == "modern") {
			t.Errorf("%s era: the result's _meta names the server: %v; want %v (2026-07-28 only)\n%s", era, modern, era == "modern", out)
		}
	}
	call := []string{"--method", "tools/call", "--tool-name", "hash_sha256", "--tool-arg", "text=hi"}

	t.Run("strict", func(t *testing.T) {
		// --strict exits 6 on any error-severity portability problem.
		for _, cwd := range []string{root, conformance} {
			run(t, "--cwd", cwd, bin, "serve", "--no-watch", "--method", "tools/list", "--strict")
		}
	})
	for _, era := range []string{"legacy", "modern"} {
		t.Run("stdio-"+era, func(t *testing.T) {
			checkHash(t, era, run(t, append([]string{"--protocol-era", era, "--cwd", root, bin, "serve", "--no-watch"}, call...)...))
		})
	}
	t.Run("http", func(t *testing.T) {
		_, url := systest.ServeHTTP(t, "--config", filepath.Join(root, "plugins.toml"), "--no-watch")
		for _, era := range []string{"legacy", "modern"} {
			checkHash(t, era, run(t, append([]string{"--protocol-era", era, "--transport", "http", url}, call...)...))
		}
	})
	t.Run("logging", func(t *testing.T) {
		// The Inspector offers a log level only to a server whose
		// capabilities (server/discover in the modern era) declare
		// logging: logging/setLevel in the legacy era, the per-request
		// _meta level in the modern one (where its SDK client sends no
		// logging/setLevel; host/testdata/stateless-2026-07-28.txtar
		// shows mcphost serving one anyway).
		_, url := systest.ServeHTTP(t, "--config", filepath.Join(root, "plugins.toml"), "--no-watch")
		for _, transport := range [][]string{{"--cwd", root, bin, "serve", "--no-watch"}, {"--transport", "http", url}} {
			out := run(t, append(append([]string{"--protocol-era", "modern"}, transport...), "--method", "initialize")...)
			var res struct {
				ProtocolVersion string
				Capabilities    map[string]json.RawMessage
			}
			if err := json.Unmarshal(out, &res); err != nil || res.ProtocolVersion != "2026-07-28" || res.Capabilities["logging"] == nil {
				t.Errorf("modern era, %s: the Inspector sees %.400s (%v); want 2026-07-28 with capabilities.logging", transport[0], out, err)
			}
			run(t, append(append([]string{"--protocol-era", "legacy"}, transport...), "--method", "logging/setLevel", "--log-level", "debug")...)
		}
	})
	t.Run("resources-and-prompts", func(t *testing.T) {
		readme, err := os.ReadFile(filepath.Join(root, "examples", "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		var read struct {
			Contents []struct{ URI, Text string }
		}
		out := run(t, "--cwd", root, bin, "serve", "--no-watch", "--method", "resources/read", "--uri", "file:///data/README.md")
		if err := json.Unmarshal(out, &read); err != nil || len(read.Contents) != 1 || read.Contents[0].Text != string(readme) {
			t.Errorf("resources/read file:///data/README.md: got %.300s (%v); want examples/README.md", out, err)
		}
		var prompt struct {
			Messages []struct {
				Content struct {
					Resource struct{ Text string }
				}
			}
		}
		out = run(t, "--cwd", root, bin, "serve", "--no-watch", "--method", "prompts/get", "--prompt-name", "summarize_file", "--prompt-args", "path=README.md")
		if err := json.Unmarshal(out, &prompt); err != nil || len(prompt.Messages) == 0 || prompt.Messages[0].Content.Resource.Text != string(readme) {
			t.Errorf("prompts/get summarize_file: got %.300s (%v); want README.md embedded", out, err)
		}
	})
	t.Run("skills-verify", func(t *testing.T) {
		// --verify exits 7 when a skill fails its checks and 8 when it
		// could not be checked whole; each skill is one JSON line.
		out := run(t, "--cwd", conformance, bin, "serve", "--no-watch", "--method", "skills/list", "--verify")
		n := 0
		for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); n++ {
			var r struct {
				Name, Outcome string
				OK            bool
				Files         []struct{ Status string }
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil || !r.OK || r.Outcome != "verified" || len(r.Files) == 0 {
				t.Errorf("skill report %s (%v): want ok and verified, with its files", sc.Bytes(), err)
			}
		}
		if n == 0 {
			t.Errorf("skills/list --verify reported no skill:\n%s", out)
		}
	})
	t.Run("app-info", func(t *testing.T) {
		out := run(t, "--advertise-apps", "--cwd", palette, bin, "serve", "--no-watch", "--method", "tools/list", "--app-info")
		apps := map[string]string{}
		for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
			var r struct {
				ToolName, ResourceURI string
				HasApp                bool
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("app-info line %s: %v", sc.Bytes(), err)
			}
			if r.HasApp {
				apps[r.ToolName] = r.ResourceURI
			}
		}
		if got := apps["palette_palette"]; got != "ui://palette/app.html" || len(apps) != 1 {
			t.Errorf("tools with an app: got %v; want palette_palette at ui://palette/app.html only\n%s", apps, out)
		}
	})
}
