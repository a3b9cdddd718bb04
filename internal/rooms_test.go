package internal_test

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var listBackArrows = flag.Bool("back-arrows", false, "with -v, log every back-arrow of the packages TestRoomArrows measures")

// backArrows is how many arrows run back up (feedbackOrder) inside each
// package TestRoomArrows measures: the roots of host, plugins and sandbox
// and every package of at least minRooms files. A figure changes only on
// purpose: one that grows fails (move the declaration to the file whose
// job it is instead), one that falls fails until its entry is lowered, so
// the gain is recorded.
var backArrows = map[string]int{
	"cmd/mcphost/internal/cli":     11,
	"cmd/mcphost/internal/systest": 0,
	"host":                         28,
	"host/streamable":              16,
	"plugins":                      12,
	"plugins/config":               10,
	"plugins/source":               5,
	"sandbox":                      12,
	"sandbox/internal/component":   9,
	"sdk-guest":                    9,
}

// minRooms is the size from which a package's files are measured even when
// it is not a root.
const minRooms = 10

// TestRoomArrows measures the files of a package as rooms and their uses
// of each other as arrows, as the review of issue 40 did with farm-studio,
// and fails when a package's back-arrows differ from backArrows.
//
// The rooms of a package are its production Go files on linux/amd64
// (go/build's choice; tests aside, generated files counted) and each
// folder beneath it that holds Go code (testdata aside), a room of its
// own whatever it holds, as the review counted them. An arrow A → B is
// one ordered pair of rooms, counted once however often A names something
// of B. A file uses a file when one of its identifiers resolves
// (go/types) to an object declared in the other: a package-level const,
// var, type or func, a method (a method declared in A on B's type is an
// arrow A → B, through its receiver) or a struct field; imports are not
// resolved (each stands in as an empty package), so a call through an
// interface is no arrow. A room uses a folder when one of its non-test
// files imports a package in it; a folder uses a file when one of its
// non-test files selects a package-level name the file declares
// (host.Server). Go forbids import cycles, so folders never lie on a
// cycle: they add arrows, never back-arrows.
//
// Back-arrows are those that run up in the best top-down order of the
// rooms found: each room above the rooms it uses wherever the cycles allow.
// Every cycle of rooms holds at least one back-arrow, so cycles make the
// figure; the fewest possible (a minimum feedback arc set) is NP-hard to
// find, so the order is Eades, Lin and Smyth's greedy one (sinks to the
// bottom, sources to the top, otherwise the room whose arrows out most
// exceed its arrows in), then improved by moving one room at a time to the
// place where fewest of its arrows run back, until no move helps. The
// figure is an upper bound of the minimum, the same for the same code. The
// arrows that lie on any cycle (inside a strongly connected component) are
// logged beside it: the most any order could have to reverse.
func TestRoomArrows(t *testing.T) {
	graphs := moduleFileGraphs(t, "..")
	if len(graphs) < 3 {
		t.Fatalf("measured %d packages; want at least host, plugins and sandbox", len(graphs))
	}
	t.Logf("%-28s %5s %6s %5s %9s", "package", "rooms", "arrows", "back", "on cycles")
	for _, g := range graphs {
		order, back := g.feedbackOrder()
		t.Logf("%-28s %5d %6d %5d %9d", g.dir, len(g.rooms), g.arrowCount(), len(back), g.onCycles())
		if *listBackArrows {
			t.Logf("    order: %s", strings.Join(roomNames(g, order), " "))
			for _, a := range back {
				t.Logf("    back: %s → %s (%s)", g.rooms[a[0]], g.rooms[a[1]], strings.Join(g.names[a], " "))
			}
		}
	}
	for _, p := range backArrowProblems(graphs, backArrows) {
		t.Error(p)
	}
}

// roomNames are the names of the rooms in order.
func roomNames(g *fileGraph, order []int) []string {
	names := make([]string, len(order))
	for i, v := range order {
		names[i] = g.rooms[v]
	}
	return names
}

// backArrowProblems returns what is wrong with the graphs' back-arrows
// against the figures listed, one sentence each, sorted.
func backArrowProblems(graphs []*fileGraph, listed map[string]int) []string {
	var problems []string
	seen := map[string]bool{}
	for _, g := range graphs {
		seen[g.dir] = true
		_, back := g.feedbackOrder()
		n, ok := listed[g.dir]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s has %d rooms and %d back-arrows, and backArrows does not list it: add %q: %d to backArrows in internal/rooms_test.go",
				g.dir, len(g.rooms), len(back), g.dir, len(back)))
		case len(back) > n:
			problems = append(problems, fmt.Sprintf("%s has %d back-arrows, up from %d: a file uses a declaration that belongs in a room below it; move the declaration to the file whose job it is (go test ./internal -run TestRoomArrows -v -args -back-arrows lists them)",
				g.dir, len(back), n))
		case len(back) < n:
			problems = append(problems, fmt.Sprintf("%s has %d back-arrows, down from %d: lower its entry in backArrows to %d", g.dir, len(back), n, len(back)))
		}
	}
	for dir, n := range listed {
		if !seen[dir] {
			problems = append(problems, fmt.Sprintf("backArrows lists %s at %d, but it is no root and has fewer than %d files: remove its entry", dir, n, minRooms))
		}
	}
	slices.Sort(problems)
	return problems
}

// fileGraph is a package's rooms (its files and folders) and the arrows
// between them.
type fileGraph struct {
	dir   string              // relative to the module root
	rooms []string            // file names, sorted
	uses  [][]int             // uses[a]: the rooms a uses, sorted, without a itself
	names map[[2]int][]string // what an arrow's room uses of the other, sorted
}

// arrowCount is the number of arrows, each ordered pair once.
func (g *fileGraph) arrowCount() int {
	n := 0
	for _, u := range g.uses {
		n += len(u)
	}
	return n
}

// feedbackOrder returns a top-down order of the rooms and the arrows that
// run back up in it ({from, to}, from below to above), as
// TestRoomArrows's doc comment says.
func (g *fileGraph) feedbackOrder() (order []int, back [][2]int) {
	n := len(g.rooms)
	usedBy := make([][]int, n)
	for a, us := range g.uses {
		for _, b := range us {
			usedBy[b] = append(usedBy[b], a)
		}
	}
	order = eadesOrder(g.uses, usedBy)
	for improved := true; improved; {
		improved = false
		for _, v := range slices.Clone(order) {
			order, improved = siftRoom(order, v, g.uses, usedBy, improved)
		}
	}
	pos := make([]int, n)
	for i, v := range order {
		pos[v] = i
	}
	for a, us := range g.uses {
		for _, b := range us {
			if pos[b] < pos[a] {
				back = append(back, [2]int{a, b})
			}
		}
	}
	return order, back
}

// eadesOrder is Eades, Lin and Smyth's greedy order: while rooms remain,
// sinks go to the bottom, sources to the top, and otherwise the room
// whose arrows out most exceed its arrows in (the lowest index on a tie)
// goes to the top.
func eadesOrder(uses, usedBy [][]int) []int {
	n := len(uses)
	out, in := make([]int, n), make([]int, n)
	for v := range n {
		out[v], in[v] = len(uses[v]), len(usedBy[v])
	}
	gone := make([]bool, n)
	remove := func(v int) {
		gone[v] = true
		for _, b := range uses[v] {
			in[b]--
		}
		for _, a := range usedBy[v] {
			out[a]--
		}
	}
	var top, bottom []int
	for left := n; left > 0; {
		moved := false
		for v := range n {
			if !gone[v] && out[v] == 0 {
				bottom = append(bottom, v)
				remove(v)
				left--
				moved = true
			}
		}
		for v := range n {
			if !gone[v] && in[v] == 0 {
				top = append(top, v)
				remove(v)
				left--
				moved = true
			}
		}
		if moved || left == 0 {
			continue
		}
		best := -1
		for v := range n {
			if !gone[v] && (best < 0 || out[v]-in[v] > out[best]-in[best]) {
				best = v
			}
		}
		top = append(top, best)
		remove(best)
		left--
	}
	slices.Reverse(bottom)
	return append(top, bottom...)
}

// siftRoom moves v to the place in order where fewest of its arrows run
// back up, if that is fewer than where it is, and reports whether it moved
// (or improved was already true).
func siftRoom(order []int, v int, uses, usedBy [][]int, improved bool) ([]int, bool) {
	rest := slices.DeleteFunc(slices.Clone(order), func(x int) bool { return x == v })
	// cost at p: v's uses above it, plus its users below it.
	above := map[int]bool{}
	cost := func(p int) int {
		clear(above)
		for _, x := range rest[:p] {
			above[x] = true
		}
		c := 0
		for _, b := range uses[v] {
			if above[b] {
				c++
			}
		}
		for _, a := range usedBy[v] {
			if !above[a] {
				c++
			}
		}
		return c
	}
	now := slices.Index(order, v)
	best, bestCost := now, cost(now)
	for p := range len(rest) + 1 {
		if c := cost(p); c < bestCost {
			best, bestCost = p, c
		}
	}
	if best == now {
		return order, improved
	}
	return slices.Insert(rest, best, v), true
}

// onCycles is the number of arrows whose two rooms lie on a common cycle
// (the same strongly connected component, Tarjan's algorithm).
func (g *fileGraph) onCycles() int {
	n := len(g.rooms)
	index, low, comp := make([]int, n), make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for v := range n {
		index[v], comp[v] = -1, -1
	}
	var stack []int
	next, comps := 0, 0
	var connect func(v int)
	connect = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g.uses[v] {
			if index[w] < 0 {
				connect(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = comps
				if w == v {
					break
				}
			}
			comps++
		}
	}
	for v := range n {
		if index[v] < 0 {
			connect(v)
		}
	}
	c := 0
	for a, us := range g.uses {
		for _, b := range us {
			if comp[a] == comp[b] {
				c++
			}
		}
	}
	return c
}

func TestFeedbackOrder(t *testing.T) {
	tests := []struct {
		name             string
		uses             [][]int
		arrows, back, on int
	}{
		{"a chain", [][]int{{1}, {2}, {}}, 2, 0, 0},
		{"a diamond", [][]int{{1, 2}, {3}, {3}, {}}, 4, 0, 0},
		{"two rooms using each other", [][]int{{1}, {0}}, 2, 1, 2},
		{"a ring of three", [][]int{{1}, {2}, {0}}, 3, 1, 3},
		{"a ring with a chord", [][]int{{1}, {2}, {0, 3}, {}}, 4, 1, 3},
		// 0 is used by 1, 2 and 3 and uses them back once: putting 0 at
		// the bottom reverses one arrow, not three.
		{"a helper in its user", [][]int{{3}, {0}, {0}, {0}}, 4, 1, 2},
		{"two rings sharing a room", [][]int{{1}, {0, 2}, {1}}, 4, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &fileGraph{uses: tt.uses}
			for i := range tt.uses {
				g.rooms = append(g.rooms, fmt.Sprintf("f%d.go", i))
			}
			order, back := g.feedbackOrder()
			if len(order) != len(tt.uses) {
				t.Fatalf("order %v; want every room once", order)
			}
			if got := g.arrowCount(); got != tt.arrows {
				t.Errorf("arrows = %d; want %d", got, tt.arrows)
			}
			if len(back) != tt.back {
				t.Errorf("back-arrows = %v; want %d of them (order %v)", back, tt.back, order)
			}
			if got := g.onCycles(); got != tt.on {
				t.Errorf("arrows on cycles = %d; want %d", got, tt.on)
			}
		})
	}
}

func TestBackArrowProblems(t *testing.T) {
	graphs := []*fileGraph{
		{dir: "host", rooms: []string{"a.go", "b.go"}, uses: [][]int{{1}, {0}}},   // 1 back
		{dir: "plugins", rooms: []string{"a.go", "b.go"}, uses: [][]int{{1}, {}}}, // 0 back
	}
	tests := []struct {
		name   string
		listed map[string]int
		want   []string // a word each problem, in order
	}{
		{"as listed", map[string]int{"host": 1, "plugins": 0}, nil},
		{"up, down and stale", map[string]int{"host": 0, "plugins": 1, "sandbox": 3}, []string{"up from", "down from", "sandbox"}},
		{"missing", map[string]int{"host": 1}, []string{"does not list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := backArrowProblems(graphs, tt.listed)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q; want %d", len(got), got, len(tt.want))
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, w) }) {
					t.Errorf("problems %q; want one to mention %q", got, w)
				}
			}
		})
	}
}

// measuredRoots are the flat root packages issue 40's review measured;
// every other package is measured from minRooms files.
var measuredRoots = []string{"host", "plugins", "sandbox"}

// moduleFileGraphs returns the file graph of every package under root
// that is one of measuredRoots or has at least minRooms files, by folder.
func moduleFileGraphs(t *testing.T, root string) []*fileGraph {
	t.Helper()
	module := modulePath(t, filepath.Join(root, "go.mod"))
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", false
	dirs := map[string]bool{}
	err := walkModuleGo(root, func(p string) error {
		dirs[filepath.Dir(p)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var graphs []*fileGraph
	for dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		pkg, err := ctx.ImportDir(dir, 0)
		if err != nil || (len(pkg.GoFiles) < minRooms && !slices.Contains(measuredRoots, rel)) {
			continue // no production files on linux/amd64, or too few
		}
		g, err := packageFileGraph(dir, path.Join(module, rel), pkg.GoFiles)
		if err != nil {
			t.Fatal(err)
		}
		g.dir = rel
		graphs = append(graphs, g)
	}
	slices.SortFunc(graphs, func(a, b *fileGraph) int { return cmp.Compare(a.dir, b.dir) })
	return graphs
}

// packageFileGraph parses and type-checks the files of the package in dir
// (names relative to dir, importPath its path), reads the imports of its
// folders, and returns its rooms and arrows, as TestRoomArrows says.
func packageFileGraph(dir, importPath string, names []string) (*fileGraph, error) {
	fset := token.NewFileSet()
	g := &fileGraph{rooms: slices.Sorted(slices.Values(names))}
	folders, err := subfolders(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range folders {
		g.rooms = append(g.rooms, f+"/")
	}
	room := map[string]int{}
	for i, r := range g.rooms {
		room[r] = i
	}
	pairs := map[[2]int]map[string]bool{}
	arrow := func(a, b int, name string) {
		if a == b {
			return
		}
		if pairs[[2]int{a, b}] == nil {
			pairs[[2]int{a, b}] = map[string]bool{}
		}
		pairs[[2]int{a, b}][name] = true
	}
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		for _, b := range importedFolders(f, importPath, room) {
			arrow(room[name], b, "import")
		}
	}
	conf := types.Config{
		Importer: emptyImporter{},
		Error:    func(error) {}, // what the empty imports leave undefined
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, _ := conf.Check(importPath, fset, files, info)
	fileOf := func(pos token.Pos) (int, bool) {
		i, ok := room[filepath.Base(fset.File(pos).Name())]
		return i, ok
	}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		a, okA := fileOf(id.Pos())
		b, okB := fileOf(obj.Pos())
		if okA && okB {
			arrow(a, b, obj.Name())
		}
	}
	for _, folder := range folders {
		a := room[folder+"/"]
		err := filepath.WalkDir(filepath.Join(dir, folder), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == "testdata" {
				return cmp.Or(err, filepath.SkipDir)
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, b := range importedFolders(f, importPath, room) {
				arrow(a, b, "import")
			}
			for _, name := range rootNamesUsed(f, importPath) {
				if obj := pkg.Scope().Lookup(name); obj != nil && obj.Pos().IsValid() {
					if b, ok := fileOf(obj.Pos()); ok {
						arrow(a, b, name)
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	g.uses = make([][]int, len(g.rooms))
	g.names = map[[2]int][]string{}
	for p, names := range pairs {
		g.uses[p[0]] = append(g.uses[p[0]], p[1])
		g.names[p] = slices.Sorted(maps.Keys(names))
	}
	for _, u := range g.uses {
		slices.Sort(u)
	}
	return g, nil
}

// subfolders are the folders directly in dir that hold Go files below
// them, testdata aside, sorted.
func subfolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var folders []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" {
			continue
		}
		hasGo := false
		_ = walkModuleGo(filepath.Join(dir, e.Name()), func(string) error {
			hasGo = true
			return filepath.SkipAll
		})
		if hasGo {
			folders = append(folders, e.Name())
		}
	}
	return folders, nil
}

// importedFolders are the rooms of f's imports below importPath: the
// folder room ("name/") each one lies in.
func importedFolders(f *ast.File, importPath string, room map[string]int) []int {
	var rooms []int
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		rest, ok := strings.CutPrefix(p, importPath+"/")
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(rest, "/")
		if i, ok := room[first+"/"]; ok {
			rooms = append(rooms, i)
		}
	}
	return rooms
}

// rootNamesUsed are the names f selects from the package importPath
// (host.Server: "Server"), when f imports it.
func rootNamesUsed(f *ast.File, importPath string) []string {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
			local = path.Base(p)
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				names = append(names, sel.Sel.Name)
			}
		}
		return true
	})
	return names
}

// emptyImporter stands in for every import with an empty package named
// after the last element of its path (a version suffix aside), so that
// type-checking one package reads no other.
type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	name := path.Base(p)
	if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" && p != name {
		name = path.Base(path.Dir(p))
	}
	name, _, _ = strings.Cut(name, ".")
	pkg := types.NewPackage(p, strings.ReplaceAll(name, "-", "_"))
	pkg.MarkComplete()
	return pkg, nil
}
