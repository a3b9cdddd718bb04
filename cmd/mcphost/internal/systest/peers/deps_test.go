package peers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryLinksNoExtismSDK keeps the Extism Go SDK (and what it brings:
// observe-sdk, OTLP) out of the binary: the sandbox runs the native
// kernel, and go-sdk is only the test oracle of sandbox/internal/differential.
func TestBinaryLinksNoExtismSDK(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not on PATH: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/extism/") || strings.HasPrefix(pkg, "github.com/dylibso/") {
			t.Errorf("cmd/mcphost links %s; the Extism SDK belongs in tests only", pkg)
		}
	}
}

// TestReleaseBuildDropsMethods links the binary as scripts/release.sh
// does and checks that the linker could drop the methods nothing calls:
// one reachable function that looks methods up by reflection
// (text/template's field evaluation, reflect.Value.Method) makes it keep
// every exported method of every linked type: 12 MB more executable, 5
// MiB more resident (docs/operations.md, "Memory"). It also
// checks that release.sh builds with the tags the benchmarks build with.
func TestReleaseBuildDropsMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("links the whole binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("go is not on PATH: %v", err)
	}
	script, err := os.ReadFile("../../scripts/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "go build -tags "+releaseTags+" ") {
		t.Errorf("scripts/release.sh does not build with -tags %s, as releaseBuild does", releaseTags)
	}
	cmd := releaseBuildCommand(".", filepath.Join(t.TempDir(), "bin"), "-dumpdep")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	// -dumpdep prints "from -> to" for every symbol the linker reaches,
	// with "<ReflectMethod>" after a function that looks methods up.
	parent := map[string]string{}
	var culprits []string
	for line := range strings.Lines(stdout.String() + stderr.String()) {
		from, to, ok := strings.Cut(strings.TrimSpace(line), " -> ")
		if !ok {
			continue
		}
		from, _, _ = strings.Cut(from, " <")
		to, flags, _ := strings.Cut(to, " <")
		if _, seen := parent[to]; !seen {
			parent[to] = from
			if strings.Contains(flags, "ReflectMethod") {
				culprits = append(culprits, to)
			}
		}
	}
	if len(parent) == 0 {
		t.Fatalf("-dumpdep printed no dependencies; has the linker's output changed?")
	}
	if len(culprits) > 0 {
		// The first is the cause; the others (reflect's own methods) are
		// kept because of it.
		c := culprits[0]
		chain := []string{c}
		for p := parent[c]; p != "" && p != "_" && len(chain) < 16; p = parent[p] {
			chain = append(chain, p)
		}
		t.Errorf("the binary reaches %s, which looks methods up by reflection, so the linker keeps every exported method (%d such functions in all); reached by:\n\t%s",
			c, len(culprits), strings.Join(chain[1:], "\n\t"))
	}
}
