package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// TestDocLinks checks every relative link of README.md and docs/*.md: the
// file it names exists, and a #fragment names a heading of that file (as
// GitHub makes anchors). It also keeps the README the front door: at most
// 200 lines, linking every page under docs/.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(root, "README.md")
	anchors := map[string][]string{} // file → its heading anchors, read once
	for _, file := range append([]string{readme}, pages...) {
		for _, l := range readLinks(t, file) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(l.target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
			}
			rel, _ := filepath.Rel(root, file)
			info, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, l.target, err)
				continue
			}
			if frag == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s:%d: link %q: a fragment on something other than a Markdown file", rel, l.line, l.target)
				continue
			}
			if _, ok := anchors[dest]; !ok {
				anchors[dest] = headingAnchors(t, dest)
			}
			if !slices.Contains(anchors[dest], frag) {
				t.Errorf("%s:%d: link %q: no heading makes the anchor %q (have %v)", rel, l.line, l.target, frag, anchors[dest])
			}
		}
	}

	lines := readLines(t, readme)
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it at most 200 and move the rest to docs/", len(lines))
	}
	var linked []string
	for _, l := range readLinks(t, readme) {
		linked = append(linked, filepath.Join(root, filepath.FromSlash(strings.SplitN(l.target, "#", 2)[0])))
	}
	for _, p := range pages {
		if !slices.Contains(linked, p) {
			t.Errorf("README.md does not link %s", filepath.ToSlash(p[len(root)+1:]))
		}
	}
}

type link struct {
	line   int
	target string
}

// readLinks returns the links of file outside fenced code blocks and
// inline code.
func readLinks(t *testing.T, file string) []link {
	t.Helper()
	var links []link
	fenced := false
	for i, line := range readLines(t, file) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(line), -1) {
			links = append(links, link{i + 1, m[1]})
		}
	}
	return links
}

// stripCode blanks inline code spans, where brackets are not links.
func stripCode(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// headingAnchors returns the anchors GitHub gives file's headings:
// lowercased, punctuation but '-' and '_' dropped, spaces turned into
// '-', repeats suffixed -1, -2, ….
func headingAnchors(t *testing.T, file string) []string {
	t.Helper()
	var anchors []string
	seen := map[string]int{}
	fenced := false
	for _, line := range readLines(t, file) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if fenced || !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		anchors = append(anchors, a)
	}
	return anchors
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// section returns the lines of file's section under the heading
// (a whole "## …" line), up to the next heading of that level or above.
func section(t *testing.T, file, heading string) []string {
	t.Helper()
	lines := readLines(t, file)
	i := slices.Index(lines, heading)
	if i < 0 {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	level := strings.Index(heading, " ")
	for j := i + 1; j < len(lines); j++ {
		if h := strings.Index(lines[j], " "); h > 0 && h <= level && strings.Trim(lines[j][:h], "#") == "" {
			return lines[i+1 : j]
		}
	}
	return lines[i+1:]
}

// codeSpans returns the inline code of lines, without the backquotes.
func codeSpans(lines []string) []string {
	var spans []string
	for _, l := range lines {
		parts := strings.Split(l, "`")
		for i := 1; i < len(parts); i += 2 {
			spans = append(spans, parts[i])
		}
	}
	return spans
}

// TestOperationsCommands: the command table of docs/operations.md has a
// row for every command of the binary, with the synopsis --help prints.
func TestOperationsCommands(t *testing.T) {
	rows := section(t, filepath.Join("..", "..", "..", "..", "docs", "operations.md"), "## Commands")
	spans := codeSpans(rows)
	for _, c := range commands {
		found := slices.ContainsFunc(spans, func(s string) bool {
			return s == "mcphost "+c.name || strings.HasPrefix(s, "mcphost "+c.name+" ")
		})
		if !found {
			t.Errorf("docs/operations.md, Commands: no row for `mcphost %s %s`", c.name, c.args)
		}
	}
}

// TestDevelopmentLayout: the layout table of docs/development.md names
// every package of the module (examples/ aside: examples/README.md lists
// them), so a newcomer finds each folder's job there.
func TestDevelopmentLayout(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..")
	spans := codeSpans(section(t, filepath.Join(root, "docs", "development.md"), "## Layout"))
	named := map[string]bool{}
	for _, s := range spans {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
			named[strings.TrimSuffix(f, "/")] = true
		}
	}
	var pkgs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != root && err == nil {
				return filepath.SkipDir // another module (internal/tools)
			}
			switch {
			case d.Name() == "testdata" || d.Name() == "node_modules" || p != root && strings.HasPrefix(d.Name(), "."),
				rel == "examples":
				return filepath.SkipDir
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); strings.HasSuffix(p, ".go") && !slices.Contains(pkgs, dir) {
			pkgs = append(pkgs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 30 {
		t.Fatalf("found %d packages under %s; want the whole module", len(pkgs), root)
	}
	for _, p := range pkgs {
		if p == "." {
			p = "sdk.go" // the root package is one file
		}
		if !named[p] {
			t.Errorf("docs/development.md, Layout: package %s is not named (as `%s/`)", p, p)
		}
	}
}
