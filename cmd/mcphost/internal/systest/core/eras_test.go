package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
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
					cs = systest.StartServerEra(t, client, version, args...).Session
				} else {
					cs = systest.ConnectHTTP(t, client, version, args...)
				}
				systest.CheckEra(t, cs, version)
			})
		}
	}
}

// TestReloadListen2026: a 2026-07-28 client hears of a reload through its
// subscriptions/listen stream, as a 2025 session does on its own.
func TestReloadListen2026(t *testing.T) {
	e := systest.StartReloadEra(t, "2026-07-28")
	e.Write(t, "a.wasm", systest.WasmPlugin("a1", []string{"x"}, nil, nil))
	e.Write(t, "plugins.toml", []byte(systest.ReloadHeader+"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"))
	e.Expect(t, "a plugin added to plugins.toml", "tools/list_changed")
	if got, want := e.Tools(t), []string{"a_x"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	if got := e.Call(t, "a_x"); !strings.Contains(got, "a1") {
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
	if err := os.WriteFile(conf, []byte(systest.ReloadHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-http", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs := systest.ConnectHTTP(t, client, "2026-07-28", "--config", conf)
	ctx := context.Background()
	if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("initial tools/list: %v, %v; want no tools", res, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.wasm"), systest.WasmPlugin("a1", []string{"x"}, nil, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(systest.ReloadHeader+"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(systest.NoteTimeout):
		t.Fatal("no tools/list_changed through subscriptions/listen after the reload")
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "a_x" {
		t.Fatalf("tools/list after the reload: %v %+v; want a_x", err, res)
	}
}
