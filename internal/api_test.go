package internal_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update-api", false, "rewrite internal/testdata/api/*.txt from the packages' exported declarations")

// apiPackages are the public packages whose exported declarations plugin
// authors build on: a change to one is a change for every plugin, so
// each has a golden list in testdata/api (as the Go repository's api/).
var apiPackages = []string{"abi", "sdk-guest", "sdk-guest/guesttest", "sdk-guest/stateless"}

// TestAPI fails when the exported declarations of an apiPackages package
// differ from its golden list: the guest SDK's API changes only on
// purpose.
func TestAPI(t *testing.T) {
	for _, dir := range apiPackages {
		golden := filepath.Join("testdata", "api", strings.ReplaceAll(dir, "/", "-")+".txt")
		got := strings.Join(exportedAPI(t, filepath.Join("..", dir)), "\n") + "\n"
		if *updateAPI {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%s: %v; create it with go test ./internal -run TestAPI -update-api", dir, err)
		}
		if got == string(want) {
			continue
		}
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for _, l := range gotLines {
			if !slices.Contains(wantLines, l) {
				t.Errorf("%s: added: %s", dir, l)
			}
		}
		for _, l := range wantLines {
			if !slices.Contains(gotLines, l) {
				t.Errorf("%s: removed: %s", dir, l)
			}
		}
		t.Errorf("%s: its exported API changed; plugins build on it. If on purpose (a removal or changed signature breaks plugins: say so in CHANGELOG.md), run go test ./internal -run TestAPI -update-api and commit %s", dir, golden)
	}
}

// exportedAPI returns one sorted line per exported declaration of the
// package in dir, from its non-test files under every build tag: funcs and
// methods with their signatures, types (struct fields and interface
// methods one per line), consts and vars.
func exportedAPI(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := func(n ast.Node) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	seen := map[string]bool{}
	add := func(s string) { seen[s] = true }
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Recv != nil && !exportedRecv(d.Recv) {
					continue
				}
				sig := *d
				sig.Doc, sig.Body = nil, nil
				add("func " + strings.TrimPrefix(src(&sig), "func "))
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							typeAPI(s, src, add)
						}
					case *ast.ValueSpec:
						for _, name := range s.Names {
							if name.IsExported() {
								line := d.Tok.String() + " " + name.Name
								if s.Type != nil {
									line += " " + src(s.Type)
								}
								add(line)
							}
						}
					}
				}
			}
		}
	}
	lines := make([]string, 0, len(seen))
	for l := range seen {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return lines
}

// typeAPI adds the lines of an exported type: its kind, then its exported
// struct fields or interface methods one per line.
func typeAPI(s *ast.TypeSpec, src func(ast.Node) string, add func(string)) {
	name := s.Name.Name
	if s.TypeParams != nil {
		var params []string
		for _, p := range s.TypeParams.List {
			var names []string
			for _, n := range p.Names {
				names = append(names, n.Name)
			}
			params = append(params, strings.Join(names, ", ")+" "+src(p.Type))
		}
		name += "[" + strings.Join(params, ", ") + "]"
	}
	switch ty := s.Type.(type) {
	case *ast.StructType:
		add("type " + name + " struct")
		for _, fl := range ty.Fields.List {
			if len(fl.Names) == 0 { // embedded
				add("type " + s.Name.Name + " struct, embeds " + src(fl.Type))
			}
			for _, fn := range fl.Names {
				if fn.IsExported() {
					add("type " + s.Name.Name + " struct, " + fn.Name + " " + src(fl.Type))
				}
			}
		}
	case *ast.InterfaceType:
		add("type " + name + " interface")
		for _, m := range ty.Methods.List {
			for _, mn := range m.Names {
				if mn.IsExported() {
					add("type " + s.Name.Name + " interface, " + mn.Name + strings.TrimPrefix(src(m.Type), "func"))
				}
			}
		}
	default:
		eq := " "
		if s.Assign.IsValid() {
			eq = " = "
		}
		add("type " + name + eq + src(s.Type))
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	ty := recv.List[0].Type
	if st, ok := ty.(*ast.StarExpr); ok {
		ty = st.X
	}
	switch x := ty.(type) {
	case *ast.IndexExpr:
		ty = x.X
	case *ast.IndexListExpr:
		ty = x.X
	}
	id, ok := ty.(*ast.Ident)
	return ok && id.IsExported()
}
