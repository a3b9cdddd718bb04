package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestGuardedMounts: a writable mount (allowed_paths or may_request_paths)
// that holds the config file, the grants file, a policy or secrets file, a
// plugin's .wasm, or that holds or lies inside a source or build
// directory, the plugin_dir or mcphost's caches, is refused at load,
// naming the key and what it holds; the same mount read-only, and mounts
// beside them, load. Symlinks are resolved.
func TestGuardedMounts(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	t.Setenv("GOMODCACHE", filepath.Join(base, "gomod"))
	for _, d := range []string{"conf", "src/sub", "wasm", "data", "drop", "cache/mcphost/wazero", "build", "gomod/x", "pol", "sec"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "conf"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(base, "conf", "plugins.toml")
	if err := os.WriteFile(filepath.Join(base, "pol", "policy.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "sec", "secrets.env"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
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
		{name: "a policy file's directory", mount: `["../pol"]`, what: `plugin "a"'s policy file`},
		{name: "a policy file's directory read-only", mount: `["../pol:/p:ro"]`},
		{name: "the secrets_file's directory", mount: `["../sec"]`, what: "secrets_file"},
		{name: "the secrets_file's directory asked for", key: "may_request_paths", mount: `["../sec"]`, what: "secrets_file"},
		{name: "inside a source directory", mount: `["../src/sub"]`, what: `lies inside plugin "s"'s source directory`},
		{name: "inside a source directory read-only", mount: `["../src/sub:/s:ro"]`},
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
			body := "[server]\nplugin_dir = \"../drop\"\nsecrets_file = \"../sec/secrets.env\"\n\n" +
				"[[plugin]]\nname = \"a\"\npath = \"../wasm/a.wasm\"\npolicy = \"../pol/policy.yaml\"\n\n" +
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
			for _, want := range []string{`plugin "b"`, `key "` + key + `"`, "element 0", "is writable and ", tc.what, "read-only"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q; want it to contain %q", err, want)
				}
			}
			if ce.Line != 23 || ce.Key != key {
				t.Errorf("error at line %d, key %q; want line 23, key %q", ce.Line, ce.Key, key)
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

// TestHiddenFiles: what decides what plugins may do (the config, grants,
// policy and secrets files) is in Config.Hidden, which a read-only mount
// over them hides, and the policy and secrets files are what the config
// depends on besides itself (Config.DependsOn, which the watcher watches).
func TestHiddenFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	conf := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.env"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	body := "[server]\nsecrets_file = \"s.env\"\n\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\npolicy = \"policy.yaml\"\nallowed_paths = [\".:/c:ro\"]\n"
	cfg, err := ParseConfig(conf, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{conf, filepath.Join(dir, GrantsFileName), filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "s.env")}
	slices.Sort(want)
	if got := cfg.Hidden(); !slices.Equal(got, want) {
		t.Errorf("Hidden() = %q; want %q", got, want)
	}
	if got, want := cfg.DependsOn(), []string{filepath.Join(dir, "s.env"), filepath.Join(dir, "policy.yaml")}; !slices.Equal(got, want) {
		t.Errorf("DependsOn() = %q; want %q", got, want)
	}
	if got := cfg.Server.Hidden(); !slices.Equal(got, want) {
		t.Errorf("Server.Hidden() = %q; want %q", got, want)
	}
}

// TestHardLinkedOwnedFile: a file that decides what plugins may do and
// has a second name (a hard link, which could sit inside a mount where no
// path comparison sees it) is refused at load, naming the file.
func TestHardLinkedOwnedFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links are not counted on Windows")
	}
	for _, name := range []string{GrantsFileName, "policy.yaml", "plugins.toml"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
			body := "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\npolicy = \"policy.yaml\"\n"
			for f, data := range map[string]string{GrantsFileName: "", "policy.yaml": "", "plugins.toml": body} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			conf := filepath.Join(dir, "plugins.toml")
			if _, err := LoadConfig(conf); err != nil {
				t.Fatalf("LoadConfig with one link each: %v", err)
			}
			if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(dir, name), filepath.Join(dir, "data", "x")); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(conf)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, name)) || !strings.Contains(err.Error(), "has 2 hard links") {
				t.Fatalf("LoadConfig: %v; want a refusal naming %s and its 2 hard links", err, name)
			}
		})
	}
}

// TestPolicyGrantsItsOwnDirectory: a policy whose storage grant is
// writable over the policy's own directory (away from plugins.toml) is
// refused, naming the policy file: a plugin could rewrite its own grants.
func TestPolicyGrantsItsOwnDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	pol := filepath.Join(dir, "pol")
	if err := os.Mkdir(pol, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ access, want string }{{"[read, write]", `plugin "w"'s policy file`}, {"[read]", ""}} {
		policy := "permissions:\n  storage:\n    allow:\n      - uri: fs://" + pol + "\n        access: " + tc.access + "\n"
		if err := os.WriteFile(filepath.Join(pol, "policy.yaml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ParseConfig(filepath.Join(dir, "plugins.toml"), []byte("[[plugin]]\nname = \"w\"\npath = \"w.wasm\"\npolicy = \"pol/policy.yaml\"\n"))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("access %s: %v; want it to load", tc.access, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `key "policy"`) || !strings.Contains(err.Error(), "policy.yaml:4")):
			t.Errorf("access %s: %v; want a refusal at key policy, naming policy.yaml:4 and %s", tc.access, err, tc.want)
		}
	}
}
