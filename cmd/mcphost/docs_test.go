package main

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
	root := filepath.Join("..", "..")
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
