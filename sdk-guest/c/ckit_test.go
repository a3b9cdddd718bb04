package ckit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONHelpers compiles testdata/json_test.c natively and runs it: the
// JSON reader and writer of mcphost.h need no Wasm to be tested. Without
// clang it skips, except in CI (CI=true), where scripts/kit-deps.sh
// installs it.
func TestJSONHelpers(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("clang is not installed (CI=true: scripts/kit-deps.sh should have installed it)")
		}
		t.Skip("skipping: clang is not installed; run scripts/kit-deps.sh")
	}
	bin := filepath.Join(t.TempDir(), "json_test")
	if out, err := exec.Command(clang, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
		"-Wno-unknown-attributes", "-Wno-ignored-attributes", "-o", bin, "testdata/json_test.c").CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Errorf("json_test: %v\n%s", err, out)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, "demo"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plugin.c", "mcphost.h", "build.sh", "plugins.toml", "README.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.Contains(string(b), "{{") && f != "mcphost.h" {
			t.Errorf("%s: holds an unrendered placeholder", f)
		}
	}
}
