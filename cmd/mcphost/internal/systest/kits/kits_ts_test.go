package kits

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	tskit "github.com/mcphost/mcphost/sdk-guest/ts"
)

// tsToolchain links the TypeScript kit's installed packages
// (MCPHOST_TS_TOOLCHAIN, from scripts/kits.sh) into dir as its
// node_modules, in place of npm install, or skips.
func tsToolchain(t *testing.T, dir string) {
	t.Helper()
	_, err := exec.LookPath("npm")
	systest.RequireTool(t, "npm is not installed", err == nil)
	tc := os.Getenv("MCPHOST_TS_TOOLCHAIN")
	_, err = os.Stat(filepath.Join(tc, "@bytecodealliance", "componentize-js"))
	systest.RequireTool(t, "MCPHOST_TS_TOOLCHAIN does not name a node_modules with @bytecodealliance/componentize-js", tc != "" && err == nil)
	if err := os.Symlink(tc, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
}

// TestKitTSImports builds the TypeScript kit's template with a world that
// imports interfaces, wasi:config/store (as wassette's components read
// their keys) and wasi:logging, their WIT in wit/deps/ and their
// declarations written to types/interfaces/. The tool, called through
// `mcphost call`, returns what wasi:config/store holds for a key: one a
// wassette policy.yaml grants from the environment, one from the plugin's
// config table, and none; its log line comes through wasi:logging.
// tsKitProject writes the TypeScript kit's template as plugin name into
// a temporary directory, with the toolchain linked and each of witDeps
// (paths below sandbox/internal/component/testdata/wit) copied to wit/deps/, and
// returns the directory and a function that writes a file into it.
func tsKitProject(t *testing.T, name string, witDeps ...string) (string, func(name, text string)) {
	t.Helper()
	dir := t.TempDir()
	if err := tskit.Write(dir, name); err != nil {
		t.Fatal(err)
	}
	tsToolchain(t, dir)
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dep := range witDeps {
		b, err := os.ReadFile(filepath.Join("..", "..", "sandbox", "internal", "component", "testdata", "wit", dep))
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join("wit", "deps", dep), string(b))
	}
	return dir, write
}

func TestKitTSImports(t *testing.T) {
	bin := systest.Binary(t)
	dir, write := tsKitProject(t, "kimports", "wasi-config/store.wit", "wasi-logging/logging.wit")
	write("wit/world.wit", `package local:plugin;

world plugin {
  import wasi:config/store@0.2.0-draft;
  import wasi:logging/logging;

  /// Returns the value wasi:config/store holds for key.
  export read-config: func(key: string) -> result<string, string>;
}
`)
	write("src/index.ts", `import type * as World from "local:plugin/plugin";
import { get } from "wasi:config/store@0.2.0-draft";
import { log } from "wasi:logging/logging";

export function readConfig(key: string): string {
  log("info", "kimports", "reading " + key);
  const v = get(key);
  if (v === undefined) throw key + " is not set";
  return v;
}

({ readConfig }) satisfies typeof World;
`)
	write("policy.yaml", `version: "1.0"
description: "Permission policy for the kit's imports test"
permissions:
  environment:
    allow:
      - key: "KIMPORTS_TOKEN"
`)
	write("plugins.toml", `[[plugin]]
name = "kimports"
path = "kimports.wasm"
policy = "policy.yaml"
config = { greeting = "hello from config" }
`)
	env := append(os.Environ(), "npm_config_offline=true", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9")
	build := exec.Command(tskit.BuildCommand()[0], tskit.BuildCommand()[1:]...)
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, f := range []string{"types/interfaces/wasi-config-store.d.ts", "types/interfaces/wasi-logging-logging.d.ts"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("build wrote no %s: %v", f, err)
		}
	}

	for _, tt := range []struct {
		key, text string
		isError   bool
	}{
		{"KIMPORTS_TOKEN", "token from the environment", false},
		{"greeting", "hello from config", false},
		{"HOME", "HOME is not set", true},
	} {
		call := exec.Command(bin, "call", "--config", "plugins.toml", "--log-level", "info", "kimports_read-config", `{"key":"`+tt.key+`"}`)
		call.Dir, call.Env = dir, append(env, "KIMPORTS_TOKEN=token from the environment")
		var stderr strings.Builder
		call.Stderr = &stderr
		out, _ := call.Output()
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.IsError != tt.isError || len(res.Content) != 1 || res.Content[0].Text != tt.text {
			t.Errorf("read-config %s: got %s (%v)\nstderr:\n%s\nwant %q, isError %v", tt.key, out, err, stderr.String(), tt.text, tt.isError)
		}
		if want := `text="reading ` + tt.key + `"`; !strings.Contains(stderr.String(), want) {
			t.Errorf("read-config %s: no guest log line with %s in\n%s", tt.key, want, stderr.String())
		}
	}
}
