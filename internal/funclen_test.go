package internal_test

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is how long a function may be, from its func keyword to its
// closing brace, closures inside it included. Past it a function does
// several jobs at once; split it into steps named for what they do. At
// 120 lines the module had eight functions over the line, and four once
// the first were split (issue 40); 100 would list ten.
const maxFuncLines = 120

// longFuncs are the functions over maxFuncLines today, by package folder
// and name (Type.Method for a method), each with its length. The list only
// shrinks: a listed function may not grow, one that shrinks lowers its
// entry, and one that falls within the ceiling (or goes) leaves the list.
var longFuncs = map[string]int{
	// One short registration after another: wasi:cli, clocks, random,
	// poll and streams (filesystem, HTTP and the rest are add* beside it).
	"sandbox/internal/wasip2.Host": 155,
	// One case per key of a [[plugins]] table, each with its check.
	"plugins/config.configParser.plugin": 152,
	// The conformance fixture's input tools, a closure each, named as the
	// suite names them.
	"examples/conformance.registerInputTools": 134,
}

// funcLen is one function declaration and its length in lines.
type funcLen struct {
	key   string // package folder ("(root)" for the module's) "." name, as in longFuncs
	file  string // relative to the module root
	lines int
}

// TestFunctionLength walks every non-test, non-generated Go file of the
// module and fails for each function longer than maxFuncLines that
// longFuncs does not list at its length, and for each entry of longFuncs
// that no longer matches a function over the line. It logs the ten
// longest functions (go test -v).
func TestFunctionLength(t *testing.T) {
	funcs := moduleFuncs(t, "..")
	if len(funcs) < 1000 {
		t.Fatalf("found %d functions; want the whole module's", len(funcs))
	}
	for _, f := range funcs[:10] {
		t.Logf("%4d lines  %s  (%s)", f.lines, f.key, f.file)
	}
	for _, p := range longFuncProblems(funcs, maxFuncLines, longFuncs) {
		t.Error(p)
	}
}

// longFuncProblems returns what is wrong with funcs (longest first) under
// ceiling and the exceptions listed, one sentence each, sorted.
func longFuncProblems(funcs []funcLen, ceiling int, listed map[string]int) []string {
	var problems []string
	over := map[string]bool{}
	for _, f := range funcs {
		if f.lines <= ceiling {
			break // funcs is sorted, longest first
		}
		if over[f.key] {
			continue // a shorter twin under another build tag
		}
		over[f.key] = true
		n, ok := listed[f.key]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s (%s) is %d lines, over %d: split it into steps named for what they do (longFuncs lists only the exceptions of issue 40)",
				f.key, f.file, f.lines, ceiling))
		case f.lines > n:
			problems = append(problems, fmt.Sprintf("%s (%s) grew from %d to %d lines: split it instead (longFuncs only shrinks)", f.key, f.file, n, f.lines))
		case f.lines < n:
			problems = append(problems, fmt.Sprintf("%s (%s) shrank from %d to %d lines: lower its entry in longFuncs to %d", f.key, f.file, n, f.lines, f.lines))
		}
	}
	for key, n := range listed {
		if !over[key] {
			problems = append(problems, fmt.Sprintf("longFuncs lists %s at %d lines, but no function of that name is over %d: remove its entry", key, n, ceiling))
		}
	}
	slices.Sort(problems)
	return problems
}

func TestLongFuncProblems(t *testing.T) {
	funcs := []funcLen{
		{key: "a.grown", file: "a/a.go", lines: 40},
		{key: "a.new", file: "a/a.go", lines: 30},
		{key: "a.twin", file: "a/x_linux.go", lines: 25},
		{key: "a.same", file: "a/a.go", lines: 25},
		{key: "a.shrunk", file: "a/a.go", lines: 22},
		{key: "a.twin", file: "a/x_other.go", lines: 21},
		{key: "a.short", file: "a/a.go", lines: 20},
		{key: "a.under", file: "a/a.go", lines: 19},
	}
	tests := []struct {
		name   string
		listed map[string]int
		want   []string // a word each problem, in order, "" for none
	}{
		{"all listed at their lengths", map[string]int{"a.grown": 40, "a.new": 30, "a.twin": 25, "a.same": 25, "a.shrunk": 22}, nil},
		{"new, grown, shrunk and stale", map[string]int{"a.grown": 39, "a.twin": 25, "a.same": 25, "a.shrunk": 23, "a.under": 21, "a.gone": 50},
			[]string{"grew", "split it into steps", "shrank", "a.gone", "a.under"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := longFuncProblems(funcs, 20, tt.listed)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q; want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q; want it to mention %q", i, got[i], w)
				}
			}
		})
	}
}

// moduleFuncs returns the function declarations of every non-test Go file
// under root that is not generated (ast.IsGenerated), outside testdata,
// node_modules and nested modules, longest first.
func moduleFuncs(t *testing.T, root string) []funcLen {
	t.Helper()
	var funcs []funcLen
	err := walkModuleGo(root, func(path string) error {
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if pkg == "." {
			pkg = "(root)"
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			funcs = append(funcs, funcLen{
				key:   pkg + "." + funcName(fd),
				file:  rel,
				lines: fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1,
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(funcs, func(a, b funcLen) int {
		return cmp.Or(b.lines-a.lines, strings.Compare(a.key, b.key))
	})
	return funcs
}

// walkModuleGo calls fn with the path of every Go file of the module
// under root (tests included), outside testdata, node_modules and nested
// modules (internal/tools).
func walkModuleGo(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module (internal/tools)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		return fn(path)
	})
}

// funcName is fd's name, Type.Name for a method (type parameters left out).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	return fmt.Sprintf("%s.%s", typ, fd.Name.Name)
}
