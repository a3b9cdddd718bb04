package kits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestComponentHostileServer serves the kinds component beside hostile
// ones (scripts/components.sh: amplify, abuse, schemas) with the real
// binary over Streamable HTTP: the component whose schemas are too large
// is not served, and the other two fail their own calls with a plain
// message (a result over the output limit, headers held past the memory
// limit), while the process, kinds and a second session go on serving.
func TestComponentHostileServer(t *testing.T) {
	dir := os.Getenv("MCPHOST_COMPONENTS")
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	var toml strings.Builder
	for _, p := range []struct{ name, extra string }{
		{"kinds", ""}, {"amplify", ""}, {"abuse", "memory = \"8MiB\"\n"}, {"schemas", ""},
	} {
		wasm := filepath.Join(dir, p.name+".wasm")
		if _, err := os.Stat(wasm); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%v (CI=true: scripts/components.sh should have built it)", err)
			}
			t.Skipf("skipping: %v; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", err)
		}
		toml.WriteString("[[plugin]]\nname = \"" + p.name + "\"\npath = " + systest.Quote(wasm) + "\n" + p.extra + "\n")
	}
	if err := os.WriteFile(conf, []byte(toml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, url := systest.ServeHTTP(t, "--config", conf, "--no-watch")
	connect := func() *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect(), connect()
	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	greet := func(after string) {
		t.Helper()
		for _, cs := range []*mcp.ClientSession{a, b} {
			if res := call(cs, "kinds_greet", map[string]any{"name": "x"}); res.IsError || systest.TextOf(t, res) != "¡hola, x!" {
				t.Errorf("kinds_greet after %s: %s", after, systest.TextOf(t, res))
			}
		}
	}

	tools := map[string]bool{}
	for tool, err := range a.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools[tool.Name] = true
	}
	if !tools["kinds_greet"] || !tools["amplify_amplify"] || !tools["abuse_hoard"] || tools["schemas_f0"] {
		t.Errorf("tools/list: %v; want kinds, amplify and abuse, and nothing of schemas", tools)
	}

	res := call(a, "amplify_amplify", map[string]any{"n": 16000, "size": 1 << 20})
	if !res.IsError || !strings.Contains(systest.TextOf(t, res), "the plugin's output limit") {
		t.Errorf("amplify 16000×1 MiB: %s; want an error naming the output limit", systest.TextOf(t, res))
	}
	greet("a result over the output limit")

	for i := range 4 {
		res := call(a, "abuse_hoard", map[string]any{"count": 8, "size": 256 << 10})
		if i < 3 && res.IsError {
			t.Fatalf("hoard call %d: %s", i+1, systest.TextOf(t, res))
		}
		if i == 3 && (!res.IsError || !strings.Contains(systest.TextOf(t, res), "memory limit of 8388608 bytes")) {
			t.Errorf("hoard call 4 (8 MiB held): %s; want an error naming the memory limit", systest.TextOf(t, res))
		}
	}
	greet("host memory over the limit")
}
