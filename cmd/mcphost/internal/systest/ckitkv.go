package systest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildCKitTestdata builds sdk-guest/c/testdata/NAME.c, a plugin on the
// C kit's mcphost.h, for wasm32-wasi and returns the module's path; it
// skips the test when clang or wasi-libc is missing.
func BuildCKitTestdata(t *testing.T, name string) string {
	t.Helper()
	_, err := exec.LookPath("clang")
	RequireTool(t, "clang is not installed", err == nil)
	_, err = os.Stat("/usr/lib/wasm32-wasi/crt1-reactor.o")
	RequireTool(t, "wasi-libc is not installed", err == nil)
	src, err := filepath.Abs(filepath.Join("..", "..", "sdk-guest", "c", "testdata", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(t.TempDir(), name+".wasm")
	if out, err := exec.Command("clang", "--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-Wall", "-Wextra", "-Werror",
		"-o", wasm, src).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	return wasm
}
