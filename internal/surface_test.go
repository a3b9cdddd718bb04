package internal_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// publicSurface is every package another module can import: the module's
// library packages outside internal/ folders, commands and examples aside.
// Each is API someone may depend on, so the list changes only on purpose;
// docs/development.md ("Public surface") says what each is for and
// RATIONALE.md ("Why these packages are public") why the rest are not.
var publicSurface = []string{
	".", // the embedded SDK source (go:embed reaches only below the root)
	// for plugin authors
	"abi",
	"abi/jsonscan",
	"sdk-guest",
	"sdk-guest/guesttest",
	"sdk-guest/stateless",
	// the kits `mcphost new` writes (their files live beside their README)
	"sdk-guest/assemblyscript",
	"sdk-guest/c",
	"sdk-guest/kittmpl",
	"sdk-guest/ts",
	// for embedders: what cmd/mcphost composes
	"host",
	"host/auth",
	"host/inproc",
	"host/metrics",
	"host/stdio",
	"host/streamable",
	"plugins",
	"plugins/config",
	"plugins/consent",
	"plugins/source",
	"plugins/store",
	"plugins/watch",
	"sandbox",
	"sandbox/limits", // plain data plugins/config holds (mounts, limits, host rules)
}

// TestPublicSurface walks the module and fails when the packages outside
// internal/ folders (commands, examples, test-only directories and other
// modules aside) differ from publicSurface.
func TestPublicSurface(t *testing.T) {
	got := publicPackages(t, "..")
	if len(got) < 10 {
		t.Fatalf("found %d public packages under ..; want the whole module's", len(got))
	}
	for _, p := range got {
		if !slices.Contains(publicSurface, p) {
			t.Errorf("%s is public but not in publicSurface: another module can import it, so it is API. "+
				"If it must be (another room or cmd imports it), add it to publicSurface in internal/surface_test.go, "+
				"to the list in docs/development.md and to RATIONALE.md (\"Why these packages are public\"); "+
				"otherwise move it under its room's internal/ (e.g. %s), or under the top-level internal/ when several rooms import a standard-library-only leaf (stdlibLeaves)", p, underInternal(p))
		}
	}
	for _, p := range publicSurface {
		if !slices.Contains(got, p) {
			t.Errorf("%s is in publicSurface but is no public package any more; if that is on purpose, "+
				"remove it from publicSurface, docs/development.md and RATIONALE.md, and say so in CHANGELOG.md (importers break)", p)
		}
	}
}

// underInternal suggests where the package in dir goes when it is private
// to its room: sandbox/x → sandbox/internal/x.
func underInternal(dir string) string {
	top, rest, ok := strings.Cut(dir, "/")
	if !ok {
		return "internal/" + dir
	}
	return top + "/internal/" + rest
}

// publicPackages returns the directories (relative to root, slash-separated,
// "." for the root) of the non-main packages with non-test Go files outside
// internal/, testdata, examples/ and other modules.
func publicPackages(t *testing.T, root string) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch d.Name() {
		case ".git", "testdata", "node_modules", "internal":
			return filepath.SkipDir
		}
		if rel == "examples" || path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		name, err := packageName(path)
		if err != nil {
			return err
		}
		if name != "" && name != "main" {
			pkgs = append(pkgs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pkgs)
	return pkgs
}

// packageName returns the package clause of dir's non-test Go files, or ""
// when it has none (a directory of files, or of tests only).
func packageName(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, n), nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return f.Name.Name, nil
	}
	return "", nil
}
