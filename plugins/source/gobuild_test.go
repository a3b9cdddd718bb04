package source

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost"
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
	out, err := BuildGo(ctx, "testdata/goodplugin", BuildOptions{CacheDir: cache})
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
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("cache holds the temporary %s; want none left", e.Name())
		}
	}

	_, err = BuildGo(ctx, "testdata/badplugin", BuildOptions{CacheDir: cache})
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
	first, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache})
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	fi := stat(first)

	again, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if again != first || !os.SameFile(fi, stat(again)) {
		t.Errorf("unchanged rebuild: got %s; want the cached %s, untouched", again, first)
	}

	write(t, filepath.Join(mod, "other/other.go"), "package other\n\nconst W = 2\n")
	if got, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache}); err != nil || got != first {
		t.Errorf("after editing an unimported package: got %s, %v; want the cached %s", got, err, first)
	}

	write(t, filepath.Join(mod, "lib/lib.go"), "package lib\n\nconst V = 2\n")
	changed, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if changed == first {
		t.Errorf("after editing an imported package: got the old cache entry %s; want a new build", changed)
	}
	write(t, filepath.Join(mod, "main_test.go"), "package main\n")
	if got, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache}); err != nil || got != changed {
		t.Errorf("after adding a _test.go file: got %s, %v; want the cached %s", got, err, changed)
	}
}

func TestBuildGoCanceled(t *testing.T) {
	needGo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := BuildGo(ctx, "testdata/goodplugin", BuildOptions{CacheDir: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("BuildGo with a canceled context: got %v; want context.Canceled", err)
	}
}

// TestBuildGoWithoutGo: a cached build is found without the go command;
// a change that needs a build then fails with the go command's error.
func TestBuildGoWithoutGo(t *testing.T) {
	needGo(t)
	ctx := context.Background()
	mod, cache := t.TempDir(), t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module example.com/p\n\ngo 1.24\n")
	write(t, filepath.Join(mod, "main.go"), "package main\n\nfunc main() {}\n")
	first, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache})
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	noGo := BuildOptions{CacheDir: cache, Go: filepath.Join(t.TempDir(), "no-such-go")}
	t.Setenv("PATH", "")
	if got, err := BuildGo(ctx, mod, noGo); err != nil || got != first {
		t.Fatalf("cached build without go: got %s, %v; want %s", got, err, first)
	}
	for _, change := range []struct{ file, data string }{
		{"main.go", "package main\n\nfunc main() { println() }\n"},
		{"extra.go", "package main\n"}, // a new file in the package
	} {
		write(t, filepath.Join(mod, change.file), change.data)
		if _, err := BuildGo(ctx, mod, noGo); err == nil || !strings.Contains(err.Error(), "no-such-go") {
			t.Errorf("after changing %s without go: got %v; want the failure to run %s", change.file, err, noGo.Go)
		}
	}
}

// TestBuildGoEmbeddedSDK builds a plugin outside this module, offline:
// the SDK comes from the binary and the plugin's go.mod is not touched.
func TestBuildGoEmbeddedSDK(t *testing.T) {
	needGo(t)
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	ctx := context.Background()
	mod, cache := t.TempDir(), t.TempDir()
	goMod := "module example.com/notes\n\ngo 1.26\n\nrequire github.com/mcphost/mcphost v0.0.0\n"
	write(t, filepath.Join(mod, "go.mod"), goMod)
	write(t, filepath.Join(mod, "main.go"), `package main

import guest "github.com/mcphost/mcphost/sdk-guest"

func main() {}

func init() {
	guest.AddTool(guest.Tool{Name: "hi", Description: "Says hi."},
		func(ctx *guest.Context, _ struct{}) (*guest.Result, error) { return guest.TextResult("hi"), nil })
}
`)
	out, err := BuildGo(ctx, mod, BuildOptions{CacheDir: cache})
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	if wasm, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Errorf("output %s: %v; want a Wasm module", out, err)
	}
	if got, _ := os.ReadFile(filepath.Join(mod, "go.mod")); string(got) != goMod {
		t.Errorf("go.mod changed to %q; want it untouched", got)
	}
	if _, err := os.Stat(filepath.Join(mod, "go.sum")); err == nil {
		t.Error("the build wrote a go.sum into the plugin; want nothing written there")
	}
}

func TestScanGoMod(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		embed     bool
		copy      string // the SDK copy found, relative to the module
	}{
		{"require line", "module m\nrequire github.com/mcphost/mcphost v0.0.0\n", true, ""},
		{"require block", "module m\nrequire (\n\tgithub.com/x/y v1.0.0\n\tgithub.com/mcphost/mcphost v1.2.3 // indirect\n)\n", true, ""},
		{"own replace", "module m\nrequire github.com/mcphost/mcphost v0.0.0\nreplace github.com/mcphost/mcphost => ../mcphost\n", false, ""},
		{"replace block", "module m\nrequire github.com/mcphost/mcphost v0.0.0\nreplace (\n\tgithub.com/mcphost/mcphost v0.0.0 => github.com/mcphost/mcphost v1.0.0\n)\n", false, ""},
		{"sdk copy", "module m\nrequire github.com/mcphost/mcphost v0.0.0\nreplace github.com/mcphost/mcphost => ./.mcphost/sdk\n", false, ".mcphost/sdk"},
		{"sdk copy, quoted, in a block", "module m\nrequire github.com/mcphost/mcphost v0.0.0\nreplace (\n\tgithub.com/mcphost/mcphost => \"./.mcphost/sdk\"\n)\n", false, ".mcphost/sdk"},
		{"a local dir of the user's", "module m\nrequire github.com/mcphost/mcphost v0.0.0\nreplace github.com/mcphost/mcphost => ./vendor-sdk\n", false, ""},
		{"no require", "module m\n\ngo 1.26\n", false, ""},
		{"the module itself", "module github.com/mcphost/mcphost\n", false, ""},
		{"commented out", "module m\n// require github.com/mcphost/mcphost v0.0.0\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "go.mod"), tc.src)
			m, err := readModule(filepath.Join(dir))
			if err != nil {
				t.Fatal(err)
			}
			if m.embedSDK != tc.embed {
				t.Errorf("embedSDK = %v; want %v", m.embedSDK, tc.embed)
			}
			want := ""
			if tc.copy != "" {
				want = filepath.Join(dir, filepath.FromSlash(tc.copy))
			}
			if m.sdkCopy != want {
				t.Errorf("sdkCopy = %q; want %q", m.sdkCopy, want)
			}
		})
	}
}

// TestRefreshSDKCopy: a plugin's SDK copy is written when missing or
// stamped by another SDK, and left alone when it is this binary's.
func TestRefreshSDKCopy(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module m\nrequire github.com/mcphost/mcphost v0.0.0\nreplace github.com/mcphost/mcphost => ./"+SDKCopyDir+"\n")
	m, err := readModule(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if got, err := refreshSDKCopy(m); err != nil || got != want {
			t.Fatalf("refresh %d = %v, %v; want %v, nil", i+1, got, err, want)
		}
	}
	guest := filepath.Join(m.sdkCopy, "sdk-guest", "guest.go")
	write(t, guest, "package guest // edited\n")
	write(t, filepath.Join(m.sdkCopy, sdkCopyStamp), "another SDK\n0000\n")
	if got, err := refreshSDKCopy(m); err != nil || !got {
		t.Fatalf("refresh of a stale copy = %v, %v; want true, nil", got, err)
	}
	if data, err := os.ReadFile(guest); err != nil || !bytes.Equal(data, mcphost.SDKFiles()["sdk-guest/guest.go"]) {
		t.Errorf("guest.go after refresh: %v; want the embedded file", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(m.sdkCopy)); len(ents) != 1 {
		t.Errorf("%s holds %d entries; want 1 (no temporary left behind)", filepath.Dir(m.sdkCopy), len(ents))
	}
}

func TestGoNotFoundError(t *testing.T) {
	tests := []struct {
		name string
		err  *GoNotFoundError
		want []string
	}{
		{"searched", &GoNotFoundError{Tried: []string{"/usr/local/go/bin/go"}},
			[]string{"go command", "not found", "/usr/local/go/bin/go", `go = "/path/to/go"`, "[server]", "PATH", "go.dev/dl"}},
		{"configured", &GoNotFoundError{Configured: "/opt/no/go"},
			[]string{"go command", "not found", `go = "/opt/no/go"`, "[server]", "not an executable file", "looks nowhere else", "remove the setting", "PATH", "go.dev/dl"}},
	}
	for _, tt := range tests {
		for _, want := range tt.want {
			if !strings.Contains(tt.err.Error(), want) {
				t.Errorf("%s: error %q does not mention %q", tt.name, tt.err, want)
			}
		}
	}
}

// TestGoCommand: a configured go that is not there is an error naming the
// setting, never a search that might find another go.
func TestGoCommand(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "go")
	write(t, fake, "#!/bin/sh\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "plain")
	write(t, notExec, "")
	tests := []struct {
		name, configured, want string
		missing                bool
	}{
		{"configured and there", fake, fake, false},
		{"configured and missing", filepath.Join(dir, "nonexistent", "go"), "", true},
		{"configured, not executable", notExec, "", true},
	}
	for _, tt := range tests {
		got, err := goCommand(tt.configured)
		var nf *GoNotFoundError
		if got != tt.want || errors.As(err, &nf) != tt.missing || tt.missing && nf.Configured != tt.configured {
			t.Errorf("%s: goCommand(%q) = %q, %v; want %q, GoNotFoundError %v", tt.name, tt.configured, got, err, tt.want, tt.missing)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int // sign
	}{
		{"/sdk/go1.26.10/bin", "/sdk/go1.26.8/bin", 1},
		{"/sdk/go1.9/bin", "/sdk/go1.26/bin", -1},
		{"/usr/lib/go-1.22/bin", "/usr/lib/go-1.22/bin", 0},
		{"go1.26rc1", "go1.26", 1},
	} {
		got := compareVersions(tc.a, tc.b)
		if sign(got) != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d; want sign %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

func write(t testing.TB, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
