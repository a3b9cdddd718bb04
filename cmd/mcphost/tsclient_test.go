package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTSClient drives `mcphost serve` with the official TypeScript SDK's
// client (internal/tools/ts/client.mjs), over stdio and over Streamable
// HTTP: it lists the tools of the root plugins.toml, and of a WebAssembly
// component, and calls one of each.
// scripts/ts-sdk.sh installs the SDK; without it the test skips, unless
// CI=true.
func TestTSClient(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "internal", "tools", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, "client.mjs")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node (%v) or the TypeScript SDK (%v) missing: run scripts/ts-sdk.sh", err, serr)
		}
		t.Skip("node or the TypeScript SDK missing: run scripts/ts-sdk.sh")
	}
	if testing.Short() {
		t.Skip("runs mcphost serve and node")
	}
	bin := mcphostBinary(t)
	examples, err := filepath.Abs(filepath.Join("..", "..", "plugins.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, conf, tool, args string
		want                   string // the call's structuredContent
	}{
		{"examples", examples, "hash_sha256", `{"text":"hello"}`,
			`{"algorithm":"sha256","hex":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}`},
	}
	// A WebAssembly component (scripts/components.sh builds it) is served
	// to this client as to the Go SDK's (TestComponentClients).
	if wasm := filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm"); fileExists(wasm) {
		conf := filepath.Join(t.TempDir(), "plugins.toml")
		if err := os.WriteFile(conf, []byte("[[plugin]]\nname = \"kinds\"\npath = "+quote(wasm)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, conf, tool, args, want string }{
			"component", conf, "kinds_greet", `{"name":"Wält"}`, `{"result":"¡hola, Wält!"}`})
	} else if os.Getenv("CI") == "true" {
		t.Errorf("%s missing (CI=true: scripts/components.sh should have built it)", wasm)
	}
	run := func(t *testing.T, tool, want string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{client}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client: %v\n%s", err, stderr.String())
		}
		var got struct {
			Server struct{ Name string }
			Tools  []struct {
				Name            string
				HasOutputSchema bool
			}
			Call struct {
				IsError           bool
				StructuredContent json.RawMessage
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("client output %q: %v", out, err)
		}
		found := false
		for _, tl := range got.Tools {
			found = found || tl.Name == tool && tl.HasOutputSchema
		}
		if got.Server.Name != "mcphost" || !found {
			t.Errorf("server %q, tools %+v; want mcphost listing %s with an outputSchema", got.Server.Name, got.Tools, tool)
		}
		if got.Call.IsError || string(got.Call.StructuredContent) != want {
			t.Errorf("tools/call %s: isError %v, structuredContent %s; want %s", tool, got.Call.IsError, got.Call.StructuredContent, want)
		}
	}
	for _, c := range cases {
		t.Run(c.name+"/stdio", func(t *testing.T) {
			run(t, c.tool, c.want, "stdio", c.tool, c.args, "--", bin, "serve", "--config", c.conf, "--no-watch")
		})
		t.Run(c.name+"/http", func(t *testing.T) {
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
			case url = <-listeningAddr(errR, "/mcp"):
			case <-time.After(time.Minute):
				t.Fatal("no listening line on stderr")
			}
			run(t, c.tool, c.want, "http", c.tool, c.args, url)
		})
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
