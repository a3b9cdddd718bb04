package plugins

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	if testing.Short() {
		t.Skip("builds Wasm; skipped with -short")
	}
}

func TestBuildGoTestdata(t *testing.T) {
	needGo(t)
	ctx := context.Background()
	cache := t.TempDir()
	out, err := BuildGo(ctx, "testdata/goodplugin", cache)
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Errorf("output %s does not start with the Wasm magic", out)
	}
	if filepath.Dir(out) != cache {
		t.Errorf("output %s is not in the cache dir %s", out, cache)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Errorf("cache holds %d entries; want 1 (no temporary files left)", len(entries))
	}

	_, err = BuildGo(ctx, "testdata/badplugin", cache)
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("BuildGo(badplugin): got %v; want a *BuildError", err)
	}
	if !strings.Contains(be.Output, "undefined: undefinedFunction") || !strings.Contains(err.Error(), "undefined: undefinedFunction") {
		t.Errorf("BuildGo(badplugin): error %q; want the compiler's message in Output and Error()", err)
	}
	if want, _ := filepath.Abs("testdata/badplugin"); be.Dir != want {
		t.Errorf("BuildError.Dir = %q; want %q", be.Dir, want)
	}
}

// TestBuildGoCache builds a small module of its own: a rebuild with no
// change is a cache hit (the same file, untouched), editing an imported
// package misses, and editing a package the plugin does not import hits.
func TestBuildGoCache(t *testing.T) {
	needGo(t)
	ctx := context.Background()
	mod := t.TempDir()
	cache := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/p\n\ngo 1.24\n",
		"main.go":        "package main\n\nimport \"example.com/p/lib\"\n\nvar _ = lib.V\n\nfunc main() {}\n",
		"lib/lib.go":     "package lib\n\nconst V = 1\n",
		"other/other.go": "package other\n\nconst W = 1\n",
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Join(mod, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(mod, name), data)
	}
	stat := func(path string) os.FileInfo {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	first, err := BuildGo(ctx, mod, cache)
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	fi := stat(first)

	again, err := BuildGo(ctx, mod, cache)
	if err != nil {
		t.Fatal(err)
	}
	if again != first || !os.SameFile(fi, stat(again)) {
		t.Errorf("unchanged rebuild: got %s; want the cached %s, untouched", again, first)
	}

	write(t, filepath.Join(mod, "other/other.go"), "package other\n\nconst W = 2\n")
	if got, err := BuildGo(ctx, mod, cache); err != nil || got != first {
		t.Errorf("after editing an unimported package: got %s, %v; want the cached %s", got, err, first)
	}

	write(t, filepath.Join(mod, "lib/lib.go"), "package lib\n\nconst V = 2\n")
	changed, err := BuildGo(ctx, mod, cache)
	if err != nil {
		t.Fatal(err)
	}
	if changed == first {
		t.Errorf("after editing an imported package: got the old cache entry %s; want a new build", changed)
	}
	write(t, filepath.Join(mod, "main_test.go"), "package main\n")
	if got, err := BuildGo(ctx, mod, cache); err != nil || got != changed {
		t.Errorf("after adding a _test.go file: got %s, %v; want the cached %s", got, err, changed)
	}
}

func TestBuildGoCanceled(t *testing.T) {
	needGo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := BuildGo(ctx, "testdata/goodplugin", t.TempDir())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("BuildGo with a canceled context: got %v; want context.Canceled", err)
	}
}
