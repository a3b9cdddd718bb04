package kits

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCKitKV builds a C plugin that uses mcphost.h's key-value helpers
// (sdk-guest/c/testdata/kvcount.c) and serves it on two replicas (two
// mcphost serve processes with their own config directories) sharing one
// Redis, with the Go SDK client: its counter counts 1…N across both, and a
// value with non-ASCII bytes survives the base64 round trip.
func TestCKitKV(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C plugin and runs mcphost serve")
	}
	wasm := systest.BuildCKitTestdata(t, "kvcount")
	checkKVReplicas(t, "c", wasm)
}

// checkKVReplicas serves wasm as plugin name on two replicas (two
// mcphost serve processes with their own config directories) sharing one
// Redis, with the Go SDK client: its tool count must count 1…N across
// both, and its tool echo must give a non-ASCII text back through the
// key-value state.
func checkKVReplicas(t *testing.T, name, wasm string) {
	t.Helper()
	srv := redistest.Start(t)
	replica := func() *mcp.ClientSession {
		conf := filepath.Join(t.TempDir(), "plugins.toml")
		body := fmt.Sprintf("[server]\nstore = %q\n\n[[plugin]]\nname = %q\npath = %s\n", srv.URL(), name, systest.Quote(wasm))
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return systest.StartServer(t, mcp.NewClient(&mcp.Implementation{Name: "kv", Version: "1"}, nil), "--config", conf, "--no-watch").Session
	}
	a, b := replica(), replica()
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name + "_" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return systest.TextOf(t, res), res.IsError
	}
	for i := 1; i <= 4; i++ {
		if got, isErr := call([]*mcp.ClientSession{a, b}[i%2], "count", map[string]any{}); isErr || got != fmt.Sprint(i) {
			t.Fatalf("count %d: %q (isError %v); want %d", i, got, isErr, i)
		}
	}
	if got, isErr := call(b, "echo", map[string]any{"text": "grüß dich ☃"}); isErr || got != "grüß dich ☃" {
		t.Errorf("echo: %q (isError %v); want the text back", got, isErr)
	}
}
