package config

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryKeyDocumented keeps docs/configuration.md's promise to list
// every key: each key the parser accepts (the lists its unknown-key check
// uses) appears in code (`key` or `key = …`) in its section of the page.
func TestEveryKeyDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := docSections(string(data))
	for _, tc := range []struct {
		heading string // the "## " heading of the section that lists them
		keys    []string
	}{
		{"`[server]`", serverKeys},
		{"`[[plugin]]`", slices.Concat(pluginKeys, remoteSourceKeys, buildKeys, mountKeys, signatureKeys, []string{"plugin.signature"})},
		{"`[auth]`", slices.Concat(authKeys, []string{"auth.scopes"})},
	} {
		words, ok := sections[tc.heading]
		if !ok {
			t.Errorf("docs/configuration.md has no section %q (have %v)", "## "+tc.heading, slices.Sorted(maps.Keys(sections)))
			continue
		}
		for _, k := range tc.keys {
			if !words[k] {
				t.Errorf("docs/configuration.md, section %s: key %q is not documented", tc.heading, k)
			}
		}
	}
	for _, k := range topKeys {
		found := false
		for h := range sections {
			found = found || strings.Contains(h, "["+k+"]")
		}
		if !found {
			t.Errorf("docs/configuration.md: no section for the table [%s]", k)
		}
	}
}

var codeSpan = regexp.MustCompile("`[^`]+`")
var keyWord = regexp.MustCompile(`[a-z][a-z0-9_.]*`)

// docSections maps each "## " heading of a Markdown page to the words
// ([a-z0-9_.], and each dotted part) inside the inline code of its
// section.
func docSections(text string) map[string]map[string]bool {
	sections := map[string]map[string]bool{}
	var cur map[string]bool
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = map[string]bool{}
			sections[strings.TrimSpace(h)] = cur
			continue
		}
		if cur == nil {
			continue
		}
		for _, span := range codeSpan.FindAllString(line, -1) {
			for _, w := range keyWord.FindAllString(strings.Trim(span, "`[]"), -1) {
				w = strings.Trim(w, ".")
				cur[w] = true
				for _, part := range strings.Split(w, ".") { // [plugin.signature] documents signature
					cur[part] = true
				}
			}
		}
	}
	return sections
}
