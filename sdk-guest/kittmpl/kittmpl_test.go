package kittmpl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestWrite(t *testing.T) {
	fsys := fstest.MapFS{
		"t/a.c.tmpl":      {Data: []byte("name={{.Name}}")},
		"t/b.h":           {Data: []byte("kept {{.Name}} verbatim")},
		"t/build.sh.tmpl": {Data: []byte("echo {{.Name}}")},
		"t/sub/c.txt":     {Data: []byte("x")},
	}
	dir := t.TempDir()
	if err := Write(fsys, "t", dir, "demo"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"a.c", "name=demo"},
		{"b.h", "kept {{.Name}} verbatim"},
		{"build.sh", "echo demo"},
		{"sub/c.txt", "x"},
	} {
		got, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.file, got, err, tc.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("build.sh: got mode %v, %v; want executable", fi.Mode(), err)
	}
	if err := Write(fsys, "t", dir, "demo"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Write: got %v; want an already-exists error", err)
	}
}

func TestWriteBadName(t *testing.T) {
	for _, name := range []string{"", "9x", "a-b", "a b", strings.Repeat("a", 33), "../x"} {
		if err := Write(fstest.MapFS{}, ".", t.TempDir(), name); err == nil {
			t.Errorf("Write(%q): got nil; want an error", name)
		}
	}
}
