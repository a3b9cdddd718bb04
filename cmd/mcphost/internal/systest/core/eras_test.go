package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndToEndEras drives the real `mcphost serve` with the official Go
// SDK client in both eras, over stdio and Streamable HTTP: listing,
// calling, reading, and a plugin asking for sampling (a server→client
// request in 2025-11-25, an input_required round in 2026-07-28, which the
// SDK client answers and retries by itself).
func TestEndToEndEras(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the conformance plugin")
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				client := mcp.NewClient(&mcp.Implementation{Name: "eras", Version: "1"}, &mcp.ClientOptions{
					CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						return &mcp.CreateMessageResult{Role: "assistant", Model: "judge", Content: &mcp.TextContent{Text: "sampled"}}, nil
					},
				})
				args := []string{"--config", "../../examples/conformance/plugins.toml", "--no-watch"}
				var cs *mcp.ClientSession
				if transport == "stdio" {
					cs = startServerEra(t, client, version, args...).session
				} else {
					cs = connectHTTP(t, client, version, args...)
				}
				checkEra(t, cs, version)
			})
		}
	}
}

func checkEra(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx := context.Background()
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("protocol version = %s; want %s", got, version)
	}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "test_simple_text") || !slices.Contains(names, "test_sampling") {
		t.Errorf("tools/list = %v; want test_simple_text and test_sampling", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil || textOf(t, res) != "This is a simple text response for testing." {
		t.Errorf("test_simple_text: %v %+v", err, res)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
		t.Errorf("resources/read test://static-text: %v %+v", err, rr)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "2+2?"}})
	if err != nil || textOf(t, res) != "LLM response: sampled" {
		t.Errorf("test_sampling: %v %+v", err, res)
	}
}

// connectHTTP runs `mcphost serve --http 127.0.0.1:0 args…`, reads the
// address from its listening line and connects client to it.
func connectHTTP(t *testing.T, client *mcp.Client, version string, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx, url := serveHTTP(t, args...)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serveHTTP runs `mcphost serve --http 127.0.0.1:0 args…` until the test
// ends and returns its endpoint's URL, with a context that bounds the test.
func serveHTTP(t *testing.T, args ...string) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, mcphostBinary(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := listeningAddr(stderr, "/mcp")
	var url string
	select {
	case url = <-addr:
	case <-ctx.Done():
		t.Fatal("no listening line on stderr")
	}
	return ctx, url
}

// TestReloadListen2026: a 2026-07-28 client hears of a reload through its
// subscriptions/listen stream, as a 2025 session does on its own.
func TestReloadListen2026(t *testing.T) {
	e := startReloadEra(t, "2026-07-28")
	e.write(t, "a.wasm", wasmPlugin("a1", []string{"x"}, nil, nil))
	e.write(t, "plugins.toml", []byte(reloadHeader+"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"))
	e.expect(t, "a plugin added to plugins.toml", "tools/list_changed")
	if got, want := e.tools(t), []string{"a_x"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	if got := e.call(t, "a_x"); !strings.Contains(got, "a1") {
		t.Errorf("a_x answered %q; want a1", got)
	}
}

// TestReloadListenHTTP: the same over Streamable HTTP, where each
// stateless request is served on its own and the listen request is the
// only thing that stays open.
func TestReloadListenHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(conf, []byte(reloadHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-http", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs := connectHTTP(t, client, "2026-07-28", "--config", conf)
	ctx := context.Background()
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("initial tools/list: %v, %v; want no tools", res, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.wasm"), wasmPlugin("a1", []string{"x"}, nil, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(reloadHeader+"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(noteTimeout):
		t.Fatal("no tools/list_changed through subscriptions/listen after the reload")
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "a_x" {
		t.Fatalf("tools/list after the reload: %v %+v; want a_x", err, res)
	}
}
