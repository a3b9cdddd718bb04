package clients

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// TestTSClient drives `mcphost serve` with the official TypeScript SDK's
// clients (internal/tools/ts/client.mjs), over stdio and over Streamable
// HTTP, in both eras: @modelcontextprotocol/sdk 1.x speaks 2025-11-25;
// @modelcontextprotocol/client 2.x negotiates 2026-07-28 by itself
// (server/discover). Each lists the tools of the root plugins.toml, of a
// WebAssembly component and of the conformance plugin, and calls one of
// each; the conformance tool elicits, and the client's elicitation handler
// answers (a server->client request in 2025-11-25, an input_required round
// and a retry with inputResponses in 2026-07-28).
// scripts/ts-sdk.sh installs both; without them the test skips, unless
// CI=true.
func TestTSClient(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "internal", "tools", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, "client.mjs")
	node, err := exec.LookPath("node")
	var serr error
	for _, pkg := range []string{"sdk", "client"} {
		if _, e := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg)); e != nil && serr == nil {
			serr = e
		}
	}
	if err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node (%v) or the TypeScript SDK clients (%v) missing: run scripts/ts-sdk.sh", err, serr)
		}
		t.Skip("node or the TypeScript SDK clients missing: run scripts/ts-sdk.sh")
	}
	if testing.Short() {
		t.Skip("runs mcphost serve and node")
	}
	bin := systest.Binary(t)
	examples, err := filepath.Abs(filepath.Join("..", "..", "plugins.toml"))
	if err != nil {
		t.Fatal(err)
	}
	conformance, err := filepath.Abs(filepath.Join("..", "..", "examples", "conformance", "plugins.toml"))
	if err != nil {
		t.Fatal(err)
	}
	type tsCase struct {
		name, conf, tool, args string
		server                 string // the server name; "" is mcphost
		outputSchema           bool   // the tool declares an outputSchema
		want                   string // the call's structuredContent, or its text without an outputSchema
		elicit                 string // the content the client accepts elicitations with; "" declares no elicitation
	}
	cases := []tsCase{
		{name: "examples", conf: examples, tool: "hash_sha256", args: `{"text":"hello"}`, outputSchema: true,
			want: `{"algorithm":"sha256","hex":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}`},
		{name: "elicitation", conf: conformance, server: "mcphost-conformance", tool: "test_elicitation", args: `{"message":"Who are you?"}`,
			elicit: `{"username":"ada","email":"ada@example.org"}`,
			want:   `User response: action=accept, content={"username":"ada","email":"ada@example.org"}`},
	}
	// A WebAssembly component (scripts/components.sh builds it) is served
	// to these clients as to the Go SDK's (TestComponentClients).
	if wasm := filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm"); fileExists(wasm) {
		conf := filepath.Join(t.TempDir(), "plugins.toml")
		if err := os.WriteFile(conf, []byte("[[plugin]]\nname = \"kinds\"\npath = "+systest.Quote(wasm)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tsCase{name: "component", conf: conf, tool: "kinds_greet", args: `{"name":"Wält"}`,
			outputSchema: true, want: `{"result":"¡hola, Wält!"}`})
	} else if os.Getenv("CI") == "true" {
		t.Errorf("%s missing (CI=true: scripts/components.sh should have built it)", wasm)
	}
	clients := []struct{ sdk, version string }{
		{"1", "2025-11-25"}, // @modelcontextprotocol/sdk: initialize
		{"2", "2026-07-28"}, // @modelcontextprotocol/client: server/discover, then 2026-07-28
	}
	run := func(t *testing.T, c tsCase, sdk, version, mode string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		argv := []string{client, "--sdk", sdk}
		if c.elicit != "" {
			argv = append(argv, "--elicit", c.elicit)
		}
		argv = append(argv, mode, c.tool, c.args)
		cmd := exec.CommandContext(ctx, node, append(argv, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client: %v\n%s", err, stderr.String())
		}
		var got struct {
			ProtocolVersion string
			Server          struct{ Name string }
			Tools           []struct {
				Name            string
				HasOutputSchema bool
			}
			Call struct {
				IsError           bool
				StructuredContent json.RawMessage
				Content           []struct{ Text string }
			}
			Elicitations []string
			Sent         []struct {
				Method         string
				InputResponses bool
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("client output %q: %v", out, err)
		}
		if got.ProtocolVersion != version {
			t.Errorf("negotiated protocol version %q; want %s", got.ProtocolVersion, version)
		}
		found := false
		for _, tl := range got.Tools {
			found = found || tl.Name == c.tool && tl.HasOutputSchema == c.outputSchema
		}
		server := cmp.Or(c.server, "mcphost")
		if got.Server.Name != server || !found {
			t.Errorf("server %q, tools %+v; want %s listing %s (outputSchema %v)", got.Server.Name, got.Tools, server, c.tool, c.outputSchema)
		}
		result := string(got.Call.StructuredContent)
		if !c.outputSchema && len(got.Call.Content) > 0 {
			result = got.Call.Content[0].Text
		}
		if got.Call.IsError || result != c.want {
			t.Errorf("tools/call %s: isError %v, result %s; want %s", c.tool, got.Call.IsError, result, c.want)
		}
		if c.elicit != "" && !slices.Equal(got.Elicitations, []string{"Who are you?"}) {
			t.Errorf("elicitations answered %q; want the plugin's one question", got.Elicitations)
		}
		if mode != "http" {
			return
		}
		// On the wire: the handshake of the era, and in 2026-07-28 the
		// elicitation answered by retrying tools/call with inputResponses.
		var methods []string
		retried := false
		for _, m := range got.Sent {
			methods = append(methods, m.Method)
			retried = retried || m.Method == "tools/call" && m.InputResponses
		}
		handshake := map[string]string{"2025-11-25": "initialize", "2026-07-28": "server/discover"}[version]
		if len(methods) == 0 || methods[0] != handshake {
			t.Errorf("client sent %v; want %s first", methods, handshake)
		}
		if wantRetry := c.elicit != "" && version == "2026-07-28"; retried != wantRetry {
			t.Errorf("client sent %+v: a tools/call retried with inputResponses = %v; want %v", got.Sent, retried, wantRetry)
		}
	}
	for _, c := range cases {
		for _, cl := range clients {
			name := c.name + "/sdk" + cl.sdk + "-" + cl.version
			t.Run(name+"/stdio", func(t *testing.T) {
				run(t, c, cl.sdk, cl.version, "stdio", "--", bin, "serve", "--config", c.conf, "--no-watch")
			})
			t.Run(name+"/http", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				srv := exec.CommandContext(ctx, bin, "serve", "--config", c.conf, "--no-watch", "--http", "127.0.0.1:0")
				errR, errW := io.Pipe()
				srv.Stderr = errW
				if err := srv.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { cancel(); _ = srv.Wait(); errW.Close() }()
				var url string
				select {
				case url = <-systest.ListeningAddr(errR, "/mcp"):
				case <-time.After(time.Minute):
					t.Fatal("no listening line on stderr")
				}
				run(t, c, cl.sdk, cl.version, "http", url)
			})
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
