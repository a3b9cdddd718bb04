package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseReadOnlyAndSkills(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.toml")
	src := `[server]
read_only = true

[[plugin]]
name = "a"
path = "wasm/a.wasm"
skills = ["skills/*", "/abs/one"]

[[plugin]]
name = "b"
source = "src/b"
read_only = false
skills = ["s/*"]

[[plugin]]
name = "c"
url = "https://example.com/c.wasm"
sha256 = "` + strings.Repeat("a", 64) + `"
skills = ["c-skills/*"]
`
	cfg, err := ParseConfig(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Server.ReadOnly {
		t.Error("[server] read_only not read")
	}
	a, b, c := &cfg.Plugins[0], &cfg.Plugins[1], &cfg.Plugins[2]
	if !a.ReadOnlyTools(&cfg.Server) || b.ReadOnlyTools(&cfg.Server) {
		t.Errorf("ReadOnlyTools: a %v (want the server's true), b %v (want its own false)", a.ReadOnlyTools(&cfg.Server), b.ReadOnlyTools(&cfg.Server))
	}
	for _, tt := range []struct {
		spec *Spec
		want []string
	}{
		{a, []string{filepath.Join(dir, "wasm/skills/*"), "/abs/one"}}, // the .wasm file's directory
		{b, []string{filepath.Join(dir, "src/b/s/*")}},                 // the source directory
		{c, []string{filepath.Join(dir, "c-skills/*")}},                // a url plugin: the config's
	} {
		if !slices.Equal(tt.spec.Skills, tt.want) {
			t.Errorf("%s: skills = %q; want %q", tt.spec.Name, tt.spec.Skills, tt.want)
		}
	}
}

func TestParseReadOnlyAndSkillsErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"[server]\nread_only = 1\n", "want a boolean"},
		{"[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nread_only = \"yes\"\n", "want a boolean"},
		{"[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nskills = \"skills/*\"\n", "want an array of strings"},
		{"[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nskills = [\"\"]\n", "element 0 is empty"},
		{"[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nskills = [\"s/[\"]\n", "bad glob pattern"},
	} {
		_, err := ParseConfig(filepath.Join(t.TempDir(), "plugins.toml"), []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v; want %q", tt.src, err, tt.want)
		}
	}
}

// TestSkillWatchPaths: a watcher sees a skill file saved at any depth,
// and a skill directory added.
func TestSkillWatchPaths(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"skills/a/ref/deep", "skills/b", "skills/a/.git"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &Config{Plugins: []Spec{{Name: "p", Path: filepath.Join(dir, "p.wasm"), Skills: []string{filepath.Join(dir, "skills/*")}}}}
	got := cfg.WatchPaths()
	for _, want := range []string{"skills/*", "skills/a/*", "skills/a/ref/*", "skills/a/ref/deep/*", "skills/b/*"} {
		if !slices.Contains(got, filepath.Join(dir, want)) {
			t.Errorf("WatchPaths lacks %s: %q", want, got)
		}
	}
	if slices.Contains(got, filepath.Join(dir, "skills/a/.git/*")) {
		t.Errorf("WatchPaths watches a hidden directory: %q", got)
	}
}
