package tskit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWrite checks what the template promises without a toolchain: the
// files, exact package pins (a build must not change under the author's
// feet), and one artefact name shared by package.json, plugins.toml and
// the test. TestKitTemplates in cmd/mcphost/internal/systest/kits builds and serves it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, "demo"); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range []string{"wit/world.wit", "src/index.ts", "build.mjs", "test.mjs", "tsconfig.json", "README.md"} {
		read(f)
	}

	var pkg struct {
		Name            string            `json:"name"`
		Scripts         map[string]string `json:"scripts"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal([]byte(read("package.json")), &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	exact := regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	for _, p := range []string{"@bytecodealliance/componentize-js", "@bytecodealliance/jco", "@bytecodealliance/preview2-shim", "typescript"} {
		if v := pkg.DevDependencies[p]; !exact.MatchString(v) {
			t.Errorf("package.json: %s is %q; want an exact version", p, v)
		}
	}
	if got, want := pkg.Scripts["build"], "node build.mjs demo.wasm"; got != want {
		t.Errorf("package.json: build is %q; want %q", got, want)
	}
	if toml := read("plugins.toml"); !strings.Contains(toml, `name = "demo"`) || !strings.Contains(toml, `path = "demo.wasm"`) {
		t.Errorf("plugins.toml: got %q; want the plugin demo at demo.wasm", toml)
	}
	if !strings.Contains(read("test.mjs"), "'demo_measure'") {
		t.Errorf("test.mjs does not call demo_measure")
	}
}
