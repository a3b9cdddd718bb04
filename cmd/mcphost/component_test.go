package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestComponentClients serves the kinds component (scripts/components.sh)
// with the real binary and drives it with the official Go SDK client in
// both eras over stdio and Streamable HTTP: its WIT exports are listed as
// tools with their schemas, a call returns structuredContent, a result's
// err is isError, and arguments outside the schema never reach the guest.
func TestComponentClients(t *testing.T) {
	wasm := filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm")
	if _, err := os.Stat(wasm); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: scripts/components.sh should have built it)", err)
		}
		t.Skipf("skipping: %v; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(conf, []byte("[[plugin]]\nname = \"kinds\"\npath = "+strings.TrimSpace(quote(wasm))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				client := mcp.NewClient(&mcp.Implementation{Name: "components", Version: "1"}, nil)
				args := []string{"--config", conf, "--no-watch"}
				var cs *mcp.ClientSession
				if transport == "stdio" {
					cs = startServerEra(t, client, version, args...).session
				} else {
					cs = connectHTTP(t, client, version, args...)
				}
				checkComponent(t, cs)
			})
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func checkComponent(t *testing.T, cs *mcp.ClientSession) {
	ctx := context.Background()
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools[tool.Name] = tool
	}
	if len(tools) != 19 || tools["kinds_next-color"] == nil || tools["kinds_echo-point"] == nil {
		t.Fatalf("tools/list: %d tools %v; want the 19 exports of kinds", len(tools), tools)
	}
	if out, _ := json.Marshal(tools["kinds_divide"].OutputSchema); !strings.Contains(string(out), `"result"`) {
		t.Errorf("kinds_divide outputSchema %s; want the ok type as result", out)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_greet", Arguments: map[string]any{"name": "Wält"}})
	if err != nil || res.IsError || textOf(t, res) != "¡hola, Wält!" {
		t.Errorf("kinds_greet: %v %+v", err, res)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"result":"¡hola, Wält!"}` {
		t.Errorf("kinds_greet structuredContent %s", sc)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_divide", Arguments: map[string]any{"a": 1, "b": 0}})
	if err != nil || !res.IsError || textOf(t, res) != "division by zero" {
		t.Errorf("kinds_divide by zero: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_scale", Arguments: map[string]any{"s": map[string]any{"circle": 2}}})
	if err != nil || res.IsError || textOf(t, res) != `{"circle":4}` {
		t.Errorf("kinds_scale: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_next-color", Arguments: map[string]any{"c": "purple"}})
	if err == nil && !res.IsError {
		t.Errorf("kinds_next-color purple: %+v; want refused by the schema", res)
	}
}
