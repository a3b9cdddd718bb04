package watch

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestWatchSet(t *testing.T) {
	root := t.TempDir()
	p := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	for _, d := range []string{p("conf"), p("src", "echo"), p("c", "include")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := newWatchSet([]string{
		p("conf", "plugins.toml"),
		p("conf", "a.wasm"),
		p("src", "echo"),        // a Go-source plugin
		p("drop", "ins"),        // a plugin_dir that does not exist yet
		p("conf", "a.wasm"), "", // duplicates and blanks are dropped
		p("c", "*.c"), p("c", "include", "*.h"), // the watch globs of a built plugin
	})

	if got, want := s.dirs(), []string{p(), p("c"), p("c", "include"), p("conf"), p("src"), p("src", "echo")}; !reflect.DeepEqual(got, want) {
		t.Errorf("dirs: got %q; want %q", got, want)
	}

	tests := []struct {
		path string
		want bool
	}{
		{p("conf", "plugins.toml"), true},
		{p("conf", "a.wasm"), true},
		{p("conf", "a.wasm.tmp"), false}, // an editor's temporary file, renamed over a.wasm later
		{p("conf", "b.wasm"), false},     // not a plugin
		{p("src", "echo", "main.go"), true},
		{p("src", "echo", "go.mod"), true},
		{p("src", "echo", "go.sum"), true},
		{p("src", "echo", "README.md"), false},
		{p("src", "echo", ".main.go.swp"), false},
		{p("src", "echo", "main.go~"), false},
		{p("src", "echo", "sub", "x.go"), false}, // another package
		{p("src", "echo"), true},                 // the directory itself (renamed, removed)
		{p("src"), true},                         // a directory above a target
		{p("src", "other"), false},
		{p("drop"), true},
		{p("drop", "ins"), true},
		{p("drop", "ins", "new.wasm"), true},
		{p("drop", "ins", ".new.wasm"), false},
		{p("dropins"), false}, // shares a prefix, not a parent
		{root + "x", false},
		{p("c", "plugin.c"), true},
		{p("c", ".plugin.c"), false}, // hidden: an editor's
		{p("c", "c.wasm"), false},    // what the build writes
		{p("c", "include", "x.h"), true},
		{p("c", "include", "x.c"), false},
		{p("c", "x.h"), false},
		{p("c", "sub", "y.c"), false},
	}
	for _, tt := range tests {
		if got := s.relevant(tt.path); got != tt.want {
			t.Errorf("relevant(%s) = %v; want %v", tt.path, got, tt.want)
		}
	}

	// Once the plugin_dir exists, it is watched itself.
	if err := os.MkdirAll(p("drop", "ins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := s.dirs(), []string{p("c"), p("c", "include"), p("conf"), p("drop"), p("drop", "ins"), p("src"), p("src", "echo")}; !reflect.DeepEqual(got, want) {
		t.Errorf("dirs after mkdir: got %q; want %q", got, want)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true},
		{"/a", "/a", false},
		{"/ab", "/a", false},
		{"/a", "/", true},
		{"/", "/", false},
	}
	for _, tt := range tests {
		if got := within(filepath.FromSlash(tt.p), filepath.FromSlash(tt.dir)); got != tt.want {
			t.Errorf("within(%q, %q) = %v; want %v", tt.p, tt.dir, got, tt.want)
		}
	}
}
