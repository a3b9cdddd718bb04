package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/redistest"
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
	wasm := buildCKitTestdata(t, "kvcount")
	checkKVReplicas(t, "c", wasm)
}

// buildCKitTestdata builds sdk-guest/c/testdata/NAME.c, a plugin on the
// C kit's mcphost.h, for wasm32-wasi and returns the module's path; it
// skips the test when clang or wasi-libc is missing.
func buildCKitTestdata(t *testing.T, name string) string {
	t.Helper()
	_, err := exec.LookPath("clang")
	requireTool(t, "clang is not installed", err == nil)
	_, err = os.Stat("/usr/lib/wasm32-wasi/crt1-reactor.o")
	requireTool(t, "wasi-libc is not installed", err == nil)
	src, err := filepath.Abs(filepath.Join("..", "..", "sdk-guest", "c", "testdata", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(t.TempDir(), name+".wasm")
	if out, err := exec.Command("clang", "--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-Wall", "-Wextra", "-Werror",
		"-o", wasm, src).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	return wasm
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
		body := fmt.Sprintf("[server]\nstore = %q\n\n[[plugin]]\nname = %q\npath = %s\n", srv.URL(), name, quote(wasm))
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return startServer(t, mcp.NewClient(&mcp.Implementation{Name: "kv", Version: "1"}, nil), "--config", conf, "--no-watch").session
	}
	a, b := replica(), replica()
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name + "_" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return textOf(t, res), res.IsError
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
