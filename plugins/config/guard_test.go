package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuardedMounts: a writable mount (allowed_paths or may_request_paths)
// that holds the config file, the grants file, a plugin's .wasm, source or
// build directory, or that holds or lies inside the plugin_dir or mcphost's
// caches, is refused at load, naming the key and what it holds; the same
// mount read-only, and mounts beside them, load. Symlinks are resolved.
func TestGuardedMounts(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	t.Setenv("GOMODCACHE", filepath.Join(base, "gomod"))
	for _, d := range []string{"conf", "src", "wasm", "data", "drop", "cache/mcphost/wazero", "build", "gomod/x"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "conf"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(base, "conf", "plugins.toml")
	tests := []struct {
		name  string
		mount string // the TOML value of plugin b's key
		key   string // allowed_paths unless set
		what  string // a substring of the refusal; "" means it loads
	}{
		{name: "config dir", mount: `["."]`, what: "the config file plugins.toml"},
		{name: "config dir read-only", mount: `[".:/c:ro"]`},
		{name: "config dir table", mount: `[{ host = "." , guest = "/c" }]`, what: "the config file"},
		{name: "config dir asked for", key: "may_request_paths", mount: `["."]`, what: "the config file"},
		{name: "config dir through a symlink", mount: `["../link"]`, what: "the config file"},
		{name: "the whole host", mount: `[{ host = "/", allow_root = true }]`, what: "the config file"},
		{name: "the whole host read-only", mount: `[{ host = "/", allow_root = true, read_only = true }]`},
		{name: "another plugin's wasm", mount: `["../wasm"]`, what: `plugin "a"'s .wasm`},
		{name: "a source directory", mount: `["../src"]`, what: `plugin "s"'s source directory`},
		{name: "a build directory", mount: `["../build"]`, what: `plugin "c"'s build directory`},
		{name: "above a source directory", mount: `["..:/up"]`, what: "holds"},
		{name: "inside the caches", mount: `["../cache/mcphost/wazero"]`, what: "mcphost's caches"},
		{name: "above the caches", mount: `["../cache"]`, what: "mcphost's caches"},
		{name: "inside the Go module cache", mount: `["../gomod/x"]`, what: "the go command's caches"},
		{name: "the Go build cache", mount: `["../cache/go-build"]`, what: "the go command's caches"},
		{name: "inside the plugin_dir", key: "may_request_paths", mount: `["../drop"]`, what: "the plugin_dir"},
		{name: "a data directory", mount: `["../data"]`},
		{name: "a data directory asked for", key: "may_request_paths", mount: `["../data"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = "allowed_paths"
			}
			body := "[server]\nplugin_dir = \"../drop\"\n\n" +
				"[[plugin]]\nname = \"a\"\npath = \"../wasm/a.wasm\"\n\n" +
				"[[plugin]]\nname = \"s\"\nsource = \"../src\"\n\n" +
				"[[plugin]]\nname = \"c\"\npath = \"../wasm/c.wasm\"\nbuild = [\"make\"]\ndir = \"../build\"\n\n" +
				"[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\n" + key + " = " + tc.mount + "\n"
			_, err := ParseConfig(conf, []byte(body))
			if tc.what == "" {
				if err != nil {
					t.Fatalf("ParseConfig: %v; want it to load", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseConfig: %v; want a *ConfigError", err)
			}
			for _, want := range []string{`plugin "b"`, `key "` + key + `"`, "element 0", "is writable and holds", tc.what, "read-only"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q; want it to contain %q", err, want)
				}
			}
			if ce.Line != 21 || ce.Key != key {
				t.Errorf("error at line %d, key %q; want line 21, key %q", ce.Line, ce.Key, key)
			}
		})
	}
}

// TestGuardedPolicyMounts: a wassette policy.yaml's storage grant passes the
// same rule as plugins.toml's mounts: read-write over the config directory
// is refused, naming the policy; read-only it loads.
func TestGuardedPolicyMounts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	conf := filepath.Join(dir, "plugins.toml")
	for _, tc := range []struct {
		name, access, what string
	}{
		{name: "read-write", access: "[read, write]", what: "is writable and holds"},
		{name: "read-only", access: "[read]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := "version: \"1.0\"\npermissions:\n  storage:\n    allow:\n      - uri: fs://" + dir + "\n        access: " + tc.access + "\n"
			if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644); err != nil {
				t.Fatal(err)
			}
			body := "[[plugin]]\nname = \"w\"\npath = \"w.wasm\"\npolicy = \"policy.yaml\"\n"
			_, err := ParseConfig(conf, []byte(body))
			if tc.what == "" {
				if err != nil {
					t.Fatalf("ParseConfig: %v; want it to load", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.what) || !strings.Contains(err.Error(), "the config file") {
				t.Fatalf("ParseConfig: %v; want a refusal that says the mount %s the config file", err, tc.what)
			}
		})
	}
}
