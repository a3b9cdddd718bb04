package internal_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestInternalIsForTests walks the module and fails for every non-test
// Go file, outside test helpers and testdata, that imports a test helper
// (isTestHelper): the top-level internal/ holds the helpers the tests of
// several rooms share (and the stdlibLeaves), a room's internal/ its
// private packages and its own helpers (hosttest, wasmrun).
func TestInternalIsForTests(t *testing.T) {
	root := ".."
	module := modulePath(t, filepath.Join(root, "go.mod"))
	var files int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			if isTestHelper(rel) {
				return filepath.SkipDir // helpers may import helpers
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module (internal/tools)
				}
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
			if dir, ok := strings.CutPrefix(p, module+"/"); ok && isTestHelper(dir) {
				t.Errorf("%s imports %s: a test helper, for _test.go files only; move production code to the package that owns its job", rel, p)
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

// roomTestHelpers are the test helpers inside a room's internal/ whose
// name does not end in "test".
var roomTestHelpers = map[string]bool{"sdk-guest/internal/wasmrun": true, "sandbox/internal/oracle": true}

// isTestHelper reports whether the package in dir (slash-separated,
// relative to the module root) is code shared by tests: the top-level
// internal/ and what is beneath it, except the stdlibLeaves production
// imports; in a room's internal/, a package named …test or listed in
// roomTestHelpers, and what is beneath it.
func isTestHelper(dir string) bool { return isTestHelperOf(stdlibLeaves, dir) }

func isTestHelperOf(stdlibLeaves map[string]bool, dir string) bool {
	if dir == "internal" {
		return true
	}
	if rest, ok := strings.CutPrefix(dir, "internal/"); ok {
		name, _, _ := strings.Cut(rest, "/")
		return !stdlibLeaves["internal/"+name]
	}
	parts := strings.Split(dir, "/")
	for i := 1; i+1 < len(parts); i++ {
		if parts[i] != "internal" {
			continue
		}
		helper := strings.Join(parts[:i+2], "/")
		if strings.HasSuffix(parts[i+1], "test") || roomTestHelpers[helper] {
			return true
		}
	}
	return false
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

// stdlibLeaves are packages that import the standard library alone, so
// that every room, and the test helpers, may use them without reaching
// upward (wasmgen writes modules with wasmbin's encoders; plugins and
// sandbox keep their caches' entries with cachefile). They live in the
// top-level internal/ beside the test helpers; isTestHelper tells them
// apart.
var stdlibLeaves = map[string]bool{"internal/wasmbin": true, "internal/cachefile": true}

// rooms are the module's top-level packages in the one direction imports
// may point: a package may import its own room and the rooms before it,
// never one after. A sub-package belongs to its top folder's room.
var rooms = []string{"abi", "sandbox", "plugins", "host", "cmd"}

// TestImportDirection walks every Go file of the module, tests included,
// and fails for each import that breaks the house's rules (style.md, "The
// house"):
//   - cmd → host → plugins → sandbox → abi: no room imports a later one;
//   - abi imports the standard library only (it builds for wasip1);
//   - wazero is known by sandbox/ alone, outside tests and internal/ test
//     helpers, and the Extism SDK appears only there too;
//   - sdk-guest/ and examples/ (guest code) import abi and sdk-guest only;
//   - the root package (the embedded SDK source) imports no module
//     package, and the top-level internal/ helpers, shared by the tests of
//     every room, import abi (and stdlibLeaves) only, so that no room's tests reach upward
//     through them;
//   - a room's internal/ packages do not import the room's root package,
//     which they serve (sandbox/internal/coreruntime is the seam the
//     sandbox's Engine calls through);
//   - the lean packages reach none of the heavy modules, directly or
//     through the module's own packages (leanPath).
func TestImportDirection(t *testing.T) {
	root := ".."
	module := modulePath(t, filepath.Join(root, "go.mod"))
	var files, edges int
	graph := map[string][]string{} // package dir → imports of its non-test files
	err := walkModuleGo(root, func(path string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		test := strings.HasSuffix(path, "_test.go")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			edges++
			if why := importRule(module, dir, p, test); why != "" {
				t.Errorf("%s imports %s: %s", filepath.ToSlash(rel), p, why)
			}
			if !test {
				graph[dir] = append(graph[dir], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 || edges < 500 {
		t.Fatalf("walked %d Go files and %d imports from %s; want the whole module", files, edges, root)
	}
	for _, dir := range leanPackages {
		if graph[dir] == nil {
			t.Errorf("lean package %s has no Go files with imports; update leanPackages", dir)
		}
		if chain := leanPath(module, graph, dir); chain != nil {
			t.Errorf("%s is lean but links a heavy module: %s; give it its own plain-data types and let cmd/mcphost convert (as host/auth.Config)",
				dir, strings.Join(chain, " → "))
		}
	}
	for dir, allowed := range leafPackages {
		if graph[dir] == nil {
			t.Errorf("leaf package %s has no Go files with imports; update leafPackages", dir)
		}
		if chain := leafPath(module, graph, dir, allowed); chain != nil {
			t.Errorf("%s is a leaf but links %s; move the check beside what it checks, or let the importer pass it in (as config.Checks)",
				dir, strings.Join(chain, " → "))
		}
	}
}

// leafPackages (dirs relative to the module root) are plain data with
// their own checks, which every room above imports: of the module's own
// packages they link only the ones listed (dirs), so that a package
// needing a config type does not link a Wasm runtime, a fetcher or a
// store with it. They are lean too (leanPackages).
var leafPackages = map[string][]string{
	"plugins/config": {"plugins/internal/opfile", "sandbox/limits"},
	"sandbox/limits": nil,
}

// leanPackages (dirs relative to the module root) link none of the
// heavyModules: a token validator or a wire codec should not drag in a
// Wasm runtime, a Redis client and a signature verifier.
var leanPackages = []string{"host/auth", "host/internal/jsonrpc", "host/internal/protocol", "plugins/config", "sandbox/limits"}

// heavyModules are the module paths the lean packages must not reach.
var heavyModules = []string{
	"github.com/tetratelabs/wazero",
	"github.com/redis/go-redis",
	"github.com/sigstore/",
	"github.com/google/go-containerregistry",
}

// leanPath returns the import chain by which the package in dir reaches a
// heavy module (dirs, then the heavy import path), or nil when it reaches
// none. It follows the module's own packages through graph (package dir →
// imports, from source, every build tag at once: stricter than any one
// build); it cannot see inside other modules, so a heavy module reached only
// through a third-party package goes unnoticed (`go list -deps` shows it).
func leanPath(module string, graph map[string][]string, dir string) []string {
	return importChain(module, graph, dir, func(p string) bool {
		return slices.ContainsFunc(heavyModules, func(h string) bool { return strings.HasPrefix(p, h) })
	})
}

// leafPath returns the import chain by which the package in dir reaches
// a package of the module outside allowed (dirs), or nil when it reaches
// none; it looks through the allowed ones.
func leafPath(module string, graph map[string][]string, dir string, allowed []string) []string {
	return importChain(module, graph, dir, func(p string) bool {
		rel, ok := strings.CutPrefix(p, module+"/")
		return p == module || ok && !slices.Contains(allowed, rel)
	})
}

// importChain returns the chain of imports (dirs, then the import path)
// by which the package in dir reaches an import path for which stop is
// true, following the module's own packages through graph, or nil.
func importChain(module string, graph map[string][]string, dir string, stop func(string) bool) []string {
	seen := map[string]bool{dir: true}
	var walk func(dir string) []string
	walk = func(dir string) []string {
		for _, p := range graph[dir] {
			if stop(p) {
				return []string{dir, p}
			}
			next, ok := strings.CutPrefix(p, module+"/")
			if p == module {
				next, ok = ".", true
			}
			if !ok || seen[next] {
				continue
			}
			seen[next] = true
			if chain := walk(next); chain != nil {
				return append([]string{dir}, chain...)
			}
		}
		return nil
	}
	return walk(dir)
}

// importRule says why the file in dir (slash-separated, relative to the
// module root) may not import p, or "" when it may.
func importRule(module, dir, p string, test bool) string {
	top, _, _ := strings.Cut(dir, "/")
	helper := test || isTestHelper(dir) // test code, or a test helper
	switch {
	case strings.HasPrefix(p, "github.com/tetratelabs/wazero"):
		if top != "sandbox" && !helper {
			return "only sandbox/ knows wazero; ask sandbox for what you need"
		}
		return ""
	case strings.HasPrefix(p, "github.com/extism/") || strings.HasPrefix(p, "github.com/dylibso/"):
		if !helper {
			return "the Extism SDK is a test oracle only; sandbox runs its own kernel"
		}
		return ""
	}
	inModule := p == module || strings.HasPrefix(p, module+"/")
	if !test && top != "internal" && strings.HasPrefix(dir, top+"/internal/") && p == module+"/"+top {
		return "a room's internal/ packages serve its root package; they may not import it back"
	}
	if stdlibLeaves[dir] && !test && (inModule || strings.Contains(strings.Split(p, "/")[0], ".")) {
		return "a stdlibLeaves package imports the standard library only (internal/ helpers rely on it)"
	}
	if !inModule {
		if top == "abi" && strings.Contains(strings.Split(p, "/")[0], ".") {
			return "abi/ imports the standard library only (it builds with GOOS=wasip1)"
		}
		return ""
	}
	target, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(p, module), "/"), "/")
	switch top {
	case ".": // the embedded SDK source
		return "the root package carries files only; it imports no module package"
	case "internal":
		if target != "abi" && !stdlibLeaves[strings.TrimPrefix(p, module+"/")] {
			return "top-level internal/ helpers are shared by every room's tests, so they import abi only"
		}
		return ""
	case "sdk-guest", "examples":
		if target != "abi" && target != "sdk-guest" {
			return "guest code imports abi and sdk-guest only, never host-side packages"
		}
		return ""
	}
	if !test && top != "internal" && strings.HasPrefix(dir, top+"/internal/") && p == module+"/"+top {
		return "a room's internal/ packages serve its root package (host/internal/tasks, sandbox/internal/coreruntime); they may not import it back: take what you need through an interface the root implements"
	}
	from, to := slices.Index(rooms, top), slices.Index(rooms, target)
	switch {
	case from < 0:
		return "a Go file outside the rooms (" + strings.Join(rooms, ", ") + ", sdk-guest, examples, internal); add its folder to the house in docs and here"
	case target == "internal" || target == "" && p == module:
		return "" // test helpers (TestInternalIsForTests) and the SDK's files
	case target == "sdk-guest":
		if top != "cmd" {
			return "only cmd (mcphost new) reaches into sdk-guest, for its kit templates"
		}
		return ""
	case to < 0:
		return "imports " + target + "/, which is no room"
	case to > from:
		return "imports point cmd → host → plugins → sandbox → abi; " + top + "/ may not import " + target + "/"
	}
	return ""
}

// TestImportRule holds importRule to each rule, both ways, so that
// TestImportDirection passing means the tree keeps them.
func TestImportRule(t *testing.T) {
	const m = "example.com/m"
	tests := []struct {
		dir, imp string
		test     bool
		ok       bool
	}{
		{"cmd/mcphost", m + "/host/stdio", false, true},
		{"host", m + "/plugins/config", false, true},
		{"plugins", m + "/sandbox", false, true},
		{"sandbox/internal/component", m + "/abi/jsonscan", false, true},
		{"sandbox/internal/wasip2", m + "/sandbox/internal/component", false, true},
		{"sandbox/internal/wasip2", "github.com/tetratelabs/wazero/experimental/sys", false, true},
		{"sandbox/internal/wasip2", m + "/plugins", false, false},
		{"plugins/source", m, false, true},
		{"host/streamable", m + "/host/internal/jsonrpc", false, true},
		{"sandbox", m + "/plugins", false, false},
		{"sandbox/internal/component", m + "/plugins/config", false, false},
		{"plugins/config", m + "/host", false, false},
		{"host/auth", m + "/cmd/mcphost", false, false},
		{"abi", m + "/sandbox", false, false},
		{"sandbox", m + "/plugins", true, false}, // tests too
		{"host", m + "/sandbox", true, true},
		{"abi", "encoding/json", false, true},
		{"abi", "github.com/some/lib", false, false},
		{"sandbox/internal/looppoll", "github.com/tetratelabs/wazero/api", false, true},
		{"host", "github.com/tetratelabs/wazero", false, false},
		{"plugins", "github.com/tetratelabs/wazero", false, false},
		{"internal/wasmgen", "github.com/tetratelabs/wazero", true, true},
		{"sdk-guest/internal/wasmrun", "github.com/extism/go-sdk", false, true},
		{"sandbox", "github.com/extism/go-sdk", false, false},
		{"sandbox", "github.com/extism/go-sdk", true, true},
		{"sdk-guest", m + "/abi", false, true},
		{"sdk-guest", m + "/plugins", false, false},
		{"examples/echo", m + "/sdk-guest/stateless", false, true},
		{"examples/echo", m + "/sandbox", true, false},
		{"cmd/mcphost", m + "/sdk-guest/c", false, true},
		{"host", m + "/sdk-guest", false, false},
		{".", m + "/abi", false, false},
		{"internal/logtest", m + "/abi", false, true},
		{"internal/logtest", m + "/sandbox", false, false},
		{"internal/wasmgen", m + "/internal/wasmbin", false, true},
		{"sandbox/internal/coreruntime", m + "/sandbox", false, false},
		{"sandbox/internal/coreruntime", m + "/abi", false, true},
		{"sandbox/internal/differential", m + "/sandbox", true, true},
		{"sandbox", m + "/sandbox/internal/coreruntime", false, true},
		{"internal/wasmbin", m + "/abi", false, false},
		{"host", m + "/internal/sigtest", true, true},
		{"tools", m + "/abi", false, false},
		{"host/internal/tasks", m + "/host", false, false},
		{"host/internal/tasks", m + "/host/internal/jsonrpc", false, true},
		{"host/internal/tasks", m + "/plugins/store", false, true},
		{"host", m + "/host/internal/tasks", false, true},
		{"host/internal/reqstate", m + "/host", false, false},
		{"sandbox/internal/extism", "github.com/extism/go-sdk", false, false}, // private, not a helper
		{"host/internal/tasks", "github.com/tetratelabs/wazero", false, false},
		{"host/internal/hosttest", "github.com/tetratelabs/wazero", false, true},
		{"sandbox", m + "/internal/cachefile", false, true},
		{"internal/cachefile", m + "/abi", false, false},                            // a stdlib leaf
		{"cmd/mcphost/internal/cli", "github.com/tetratelabs/wazero", false, false}, // a command's code, not a helper
		{"cmd/mcphost/internal/systest", "github.com/tetratelabs/wazero", false, true},
		{"cmd/mcphost", m + "/cmd/mcphost/internal/cli", false, true},
		{"cmd/mcphost/internal/systest/peers", m + "/cmd/mcphost/internal/cli", true, true},
	}
	for _, tt := range tests {
		why := importRule(m, tt.dir, tt.imp, tt.test)
		if got := why == ""; got != tt.ok {
			t.Errorf("importRule(%s imports %s, test=%v): got allowed=%v (%q); want %v", tt.dir, tt.imp, tt.test, got, why, tt.ok)
		}
	}
}

// TestIsTestHelper holds isTestHelper to each kind of internal/ package.
func TestIsTestHelper(t *testing.T) {
	tests := []struct {
		dir  string
		want bool
	}{
		{"internal", true},
		{"internal/logtest", true},
		{"internal/pdk", true},
		{"internal/wasmgen/sub", true},
		{"internal/cachefile", false}, // a stdlib leaf (once moved)
		{"internal/wasmbin", false},
		{"host/internal/hosttest", true},
		{"sdk-guest/internal/wasmrun", true},
		{"sandbox/internal/rootfs", false},
		{"host/internal/tasks", false},
		{"cmd/mcphost/internal/systest", true},
		{"cmd/mcphost/internal/cli", false},
		{"host", false},
		{"plugins/store", false},
	}
	stdlibLeaves := map[string]bool{"internal/cachefile": true, "internal/wasmbin": true}
	for _, tt := range tests {
		if got := isTestHelperOf(stdlibLeaves, tt.dir); got != tt.want {
			t.Errorf("isTestHelper(%s) = %v; want %v", tt.dir, got, tt.want)
		}
	}
}

// TestLeanPath holds leanPath to finding heavy modules through the
// module's packages, and only there.
func TestLeanPath(t *testing.T) {
	const m = "example.com/m"
	graph := map[string][]string{
		"host/auth":      {"context", m + "/plugins/config"},
		"plugins/config": {m + "/sandbox", m + "/abi"},
		"sandbox":        {"github.com/tetratelabs/wazero/api"},
		"plugins/store":  {"github.com/redis/go-redis/v9"},
		"host/lean":      {m + "/abi", "github.com/lestrrat-go/jwx/v3"},
		"abi":            {"encoding/json"},
		"host/cycle":     {m + "/host/cycle2"},
		"host/cycle2":    {m + "/host/cycle", m + "/plugins/store"},
		"host/root":      {m},
		".":              {"embed"},
	}
	tests := []struct {
		dir  string
		want []string
	}{
		{"host/auth", []string{"host/auth", "plugins/config", "sandbox", "github.com/tetratelabs/wazero/api"}},
		{"host/lean", nil},
		{"abi", nil},
		{"host/cycle", []string{"host/cycle", "host/cycle2", "plugins/store", "github.com/redis/go-redis/v9"}},
		{"host/root", nil},
	}
	for _, tt := range tests {
		if got := leanPath(m, graph, tt.dir); !slices.Equal(got, tt.want) {
			t.Errorf("leanPath(%s) = %q; want %q", tt.dir, got, tt.want)
		}
	}
}

// TestLeafPath holds leafPath to finding the module packages a leaf
// reaches beyond its list, through the listed ones too.
func TestLeafPath(t *testing.T) {
	const m = "example.com/m"
	graph := map[string][]string{
		"plugins/config":          {"strings", m + "/plugins/internal/opfile", m + "/sandbox/limits", "github.com/BurntSushi/toml"},
		"plugins/internal/opfile": {"os"},
		"sandbox/limits":          {"github.com/gobwas/glob"},
		"plugins/bad":             {m + "/plugins/internal/opfile", m + "/plugins/source"},
		"plugins/deep":            {m + "/sandbox/limits"},
		"plugins/root":            {m},
	}
	allowed := []string{"plugins/internal/opfile", "sandbox/limits"}
	tests := []struct {
		dir  string
		want []string
	}{
		{"plugins/config", nil},
		{"plugins/deep", nil},
		{"plugins/bad", []string{"plugins/bad", m + "/plugins/source"}},
		{"plugins/root", []string{"plugins/root", m}},
	}
	for _, tt := range tests {
		if got := leafPath(m, graph, tt.dir, allowed); !slices.Equal(got, tt.want) {
			t.Errorf("leafPath(%s) = %q; want %q", tt.dir, got, tt.want)
		}
	}
	// An allowed package that links more is no way around the list.
	graph["sandbox/limits"] = []string{m + "/sandbox"}
	if got, want := leafPath(m, graph, "plugins/deep", allowed), []string{"plugins/deep", "sandbox/limits", m + "/sandbox"}; !slices.Equal(got, want) {
		t.Errorf("leafPath(plugins/deep) through a listed package = %q; want %q", got, want)
	}
}

// TestDocGoIsPackageDoc fails for each doc.go whose comment is not the
// package's doc: a blank line between the comment and the package clause
// leaves `go doc` showing nothing.
func TestDocGoIsPackageDoc(t *testing.T) {
	var docs int
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		docs++
		if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name) && !strings.HasPrefix(f.Doc.Text(), "Command ") {
			t.Errorf("%s: no package doc starting %q (is a blank line left before the package clause?)", path, "Package "+f.Name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if docs < 10 {
		t.Fatalf("found %d doc.go files; want the whole module's", docs)
	}
}
