package systest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	askit "github.com/mcphost/mcphost/sdk-guest/assemblyscript"
)

// BuildASKitTestdata builds sdk-guest/assemblyscript/testdata/NAME.ts in
// place of the AssemblyScript kit template's index.ts ("": the template
// itself) and returns the module's path; it skips the test when the
// toolchain is missing.
func BuildASKitTestdata(t *testing.T, name string) string {
	t.Helper()
	_, err := exec.LookPath("npm")
	RequireTool(t, "npm is not installed", err == nil)
	tc := os.Getenv("MCPHOST_AS_TOOLCHAIN")
	_, err = os.Stat(filepath.Join(tc, "assemblyscript"))
	RequireTool(t, "MCPHOST_AS_TOOLCHAIN does not name a node_modules with assemblyscript", tc != "" && err == nil)
	dir := t.TempDir()
	if err := askit.Write(dir, "kas"); err != nil {
		t.Fatal(err)
	}
	if name != "" {
		src, err := os.ReadFile(filepath.Join("..", "..", "sdk-guest", "assemblyscript", "testdata", name+".ts"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "index.ts"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(tc, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	build := askit.BuildCommand()
	cmd := exec.Command(build[0], build[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_offline=true", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(build, " "), err, out)
	}
	return filepath.Join(dir, "kas.wasm")
}
