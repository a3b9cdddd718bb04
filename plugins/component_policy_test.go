package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
)

// componentWasm returns a component built by scripts/components.sh
// (MCPHOST_COMPONENTS), or skips; under CI=true its absence fails.
func componentWasm(t *testing.T, name string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), name+".wasm"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: scripts/components.sh should have built it)", err)
		}
		t.Skipf("skipping: %v; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", err)
	}
	return wasm
}

// TestComponentPolicy loads the component config (built by
// scripts/components.sh; it reads wasi:config/store as wassette's
// get-weather-js does) under a wassette policy.yaml: the key its
// environment.allow grants reaches the component through
// wasi:config/store, as the same key granted by plugins.toml's env does.
// A storage grant of a directory that does not exist fails the plugin
// with the policy's file and line, and a granted key mcphost's
// environment does not set is logged.
func TestComponentPolicy(t *testing.T) {
	wasm := componentWasm(t, "config")
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.wasm"), string(wasm))
	write(t, filepath.Join(dir, "policy.yaml"), `version: "1.0"
description: "Permission policy for wassette weather demo"
permissions:
  network:
    allow:
      - host: "api.openweathermap.org"
  environment:
    allow:
      - key: "OPENWEATHER_API_KEY"
      - key: "MCPHOST_POLICY_UNSET"
`)
	missing := filepath.Join(dir, "missing")
	write(t, filepath.Join(dir, "missing.yaml"), "permissions:\n  storage:\n    allow:\n      - uri: fs://"+missing+"\n")
	t.Setenv("OPENWEATHER_API_KEY", "key-from-mcphost-env")
	os.Unsetenv("MCPHOST_POLICY_UNSET")
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, `
[[plugin]]
name = "weather"
path = "config.wasm"
policy = "policy.yaml"

[[plugin]]
name = "toml"
path = "config.wasm"
env = { OPENWEATHER_API_KEY = "key-from-toml" }
config = { greeting = "hi" }

[[plugin]]
name = "nothing"
path = "config.wasm"

[[plugin]]
name = "missing"
path = "config.wasm"
policy = "missing.yaml"
`)
	cfg, err := config.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	log, logs := logtest.New()
	g, err := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: log}).Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	// A granted key mcphost's environment does not set is said, not skipped silently.
	if got, want := logs.Matching("WARN environment variable a policy grants is not set"), "WARN environment variable a policy grants is not set; the plugin does not get it plugin=weather key=MCPHOST_POLICY_UNSET"; len(got) != 1 || got[0] != want {
		t.Errorf("log: got %q; want one line %q", got, want)
	}
	want := filepath.Join(dir, "missing.yaml") + ":4"
	if len(g.Failures) != 1 || g.Failures[0].Plugin != "missing" || !strings.Contains(g.Failures[0].Err.Error(), want) ||
		!strings.Contains(g.Failures[0].Err.Error(), "no such file") {
		t.Errorf("failures: %v; want missing to fail naming %s", g.Failures, want)
	}
	for _, tt := range []struct {
		tool, args, text string
		isError          bool
	}{
		{"weather_config-get", `{"key":"OPENWEATHER_API_KEY"}`, "key-from-mcphost-env", false},
		{"weather_config-all", `{}`, "OPENWEATHER_API_KEY=key-from-mcphost-env\n", false},
		{"toml_config-get", `{"key":"OPENWEATHER_API_KEY"}`, "key-from-toml", false},
		{"toml_config-all", `{}`, "OPENWEATHER_API_KEY=key-from-toml\ngreeting=hi\n", false},
		{"nothing_config-get", `{"key":"OPENWEATHER_API_KEY"}`, "not set", true},
	} {
		tl := g.Tool(tt.tool)
		if tl == nil {
			t.Errorf("%s: no such tool (tools %q)", tt.tool, toolNames(g))
			continue
		}
		out, err := tl.Run(ctx, nil, json.RawMessage(tt.args), abi.Context{ID: json.RawMessage(`1`)})
		if err != nil {
			t.Errorf("%s: %v", tt.tool, err)
			continue
		}
		var res abi.CallToolResult
		if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != tt.text || res.IsError != tt.isError {
			t.Errorf("%s(%s) = %s; want text %q, isError %v", tt.tool, tt.args, out, tt.text, tt.isError)
		}
	}
}
