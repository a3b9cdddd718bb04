package internal_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestInternalIsForTests walks the module and fails for every non-test
// Go file, outside internal/ directories and testdata, that imports one of
// the module's internal/ packages: internal/ means test helpers only.
func TestInternalIsForTests(t *testing.T) {
	root := ".."
	module := modulePath(t, filepath.Join(root, "go.mod"))
	var files int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "internal":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if isInternal(module, p) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: internal/ holds test helpers only; move production code to the package that owns its job", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("walked %d non-test Go files from %s; want the whole module", files, root)
	}
}

func isInternal(module, path string) bool {
	if path != module && !strings.HasPrefix(path, module+"/") {
		return false
	}
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}

func modulePath(t *testing.T, gomod string) string {
	t.Helper()
	f, err := os.Open(gomod)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatalf("%s: no module line", gomod)
	return ""
}
