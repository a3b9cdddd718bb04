package kits

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/cli"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
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
	if err := os.WriteFile(conf, []byte("[[plugin]]\nname = \"kinds\"\npath = "+strings.TrimSpace(systest.Quote(wasm))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				client := mcp.NewClient(&mcp.Implementation{Name: "components", Version: "1"}, nil)
				args := []string{"--config", conf, "--no-watch"}
				var cs *mcp.ClientSession
				if transport == "stdio" {
					cs = systest.StartServerEra(t, client, version, args...).Session
				} else {
					cs = systest.ConnectHTTP(t, client, version, args...)
				}
				checkComponent(t, cs)
			})
		}
	}
}

// componentFile returns the path of a component built by
// scripts/components.sh, or skips; under CI=true its absence fails.
func componentFile(t *testing.T, name string) string {
	t.Helper()
	wasm := filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), name+".wasm")
	if _, err := os.Stat(wasm); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: scripts/components.sh should have built it)", err)
		}
		t.Skipf("skipping: %v; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", err)
	}
	return wasm
}

// TestValidateComponents: `mcphost validate` fails on a component that
// imports an interface this host does not provide (acme:telemetry/log, a vendor's own), naming
// the import, though the component loads; a malformed component's
// failure names its file and says what is wrong in words; a component
// that needs nothing missing (nested) passes.
func TestValidateComponents(t *testing.T) {
	vendor := componentFile(t, "vendor")
	nested := componentFile(t, "nested")
	dir := t.TempDir()
	bad := filepath.Join(dir, "cut.wasm")
	// An import whose name claims 9 bytes where 3 are left.
	if err := os.WriteFile(bad, []byte("\x00asm\x0d\x00\x01\x00\x0a\x06\x01\x00\x09abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "plugins.toml")
	toml := ""
	for _, p := range [][2]string{{"vendor", vendor}, {"nested", nested}, {"cut", bad}} {
		toml += "[[plugin]]\nname = \"" + p[0] + "\"\npath = " + systest.Quote(p[1]) + "\n"
	}
	if err := os.WriteFile(conf, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(systest.Binary(t), "validate", "--config", conf).Output()
	if err == nil {
		t.Fatalf("validate passed; want a failure\n%s", out)
	}
	for _, want := range []string{
		"FAILED plugin vendor: imports what this host does not provide, so a call that reaches it traps: acme:telemetry/log#log",
		"FAILED plugin cut: load: cut: compile: " + bad + ": a malformed WebAssembly component",
		"the import section (id 10) at byte 10: import 0 of 1: the section ends in the middle of an item",
		"plugin nested (ABI v2, runtime component)",
		"tool      nested_relay                     relay(s: string) -> string",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("validate's output does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "FAILED plugin nested") {
		t.Errorf("nested failed validate:\n%s", out)
	}
	out, _ = exec.Command(systest.Binary(t), "validate", "--json", "--config", conf).Output()
	var rep cli.LoadReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, out)
	}
	failed := map[string]string{}
	for _, f := range rep.Failures {
		failed[f.Plugin] = f.Error
	}
	if rep.OK || !strings.Contains(failed["vendor"], "acme:telemetry/log#log") || failed["cut"] == "" || failed["nested"] != "" {
		t.Errorf("validate --json: ok %v, failures %v; want vendor (naming its import) and cut", rep.OK, failed)
	}
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
	if err != nil || res.IsError || systest.TextOf(t, res) != "¡hola, Wält!" {
		t.Errorf("kinds_greet: %v %+v", err, res)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"result":"¡hola, Wält!"}` {
		t.Errorf("kinds_greet structuredContent %s", sc)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_divide", Arguments: map[string]any{"a": 1, "b": 0}})
	if err != nil || !res.IsError || systest.TextOf(t, res) != "division by zero" {
		t.Errorf("kinds_divide by zero: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_scale", Arguments: map[string]any{"s": map[string]any{"circle": 2}}})
	if err != nil || res.IsError || systest.TextOf(t, res) != `{"circle":4}` {
		t.Errorf("kinds_scale: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_next-color", Arguments: map[string]any{"c": "purple"}})
	if err == nil && !res.IsError {
		t.Errorf("kinds_next-color purple: %+v; want refused by the schema", res)
	}
}
