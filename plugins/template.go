package plugins

import (
	"fmt"
	"strings"
)

// uriTemplate is a parsed RFC 6570 URI template, limited to what resource
// templates use: level 1 "{var}" and the reserved "{+var}" and fragment
// "{#var}" expansions, one variable per expression.
//
// Matching is the reverse of expansion. A "{var}" matches one or more
// characters other than '/', '?' and '#'; "{+var}" and "{#var}" match one
// or more of any character. Values are returned as they appear in the URI
// (not percent-decoded), so expanding the template with them gives back
// the URI exactly. When several splits are possible the earlier variables
// take as much as they can.
type uriTemplate struct {
	raw   string
	parts []tplPart
	lits  int // literal bytes, to prefer the most specific template
}

type tplPart struct {
	lit  string // a literal; "" for a variable
	name string
	op   byte // 0 for "{var}", '+' or '#'
}

func parseURITemplate(s string) (*uriTemplate, error) {
	t := &uriTemplate{raw: s}
	seen := map[string]bool{}
	for rest := s; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			t.addLit(rest)
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("uri template %q: unmatched '}'", s)
		}
		t.addLit(rest[:open])
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed '{'", s)
		}
		expr := rest[open+1 : open+end]
		rest0 := rest
		rest = rest[open+end+1:]
		var op byte
		if expr != "" && (expr[0] == '+' || expr[0] == '#') {
			op, expr = expr[0], expr[1:]
		}
		if expr == "" {
			return nil, fmt.Errorf("uri template %q: empty expression", s)
		}
		for i := 0; i < len(expr); i++ {
			if c := expr[i]; !(isNameByte(c) && c != '-' || c == '.' || c == '%') {
				return nil, fmt.Errorf("uri template %q: unsupported expression %q (only {var}, {+var} and {#var})",
					s, rest0[open:open+end+1])
			}
		}
		if seen[expr] {
			return nil, fmt.Errorf("uri template %q: variable %q appears twice", s, expr)
		}
		seen[expr] = true
		if op == '#' {
			t.addLit("#")
		}
		t.parts = append(t.parts, tplPart{name: expr, op: op})
	}
	return t, nil
}

func (t *uriTemplate) addLit(s string) {
	if s == "" {
		return
	}
	t.lits += len(s)
	if n := len(t.parts); n > 0 && t.parts[n-1].lit != "" {
		t.parts[n-1].lit += s
		return
	}
	t.parts = append(t.parts, tplPart{lit: s})
}

// match reports whether uri is an expansion of t and returns its variables.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := matcher{t: t, uri: uri, failed: map[[2]int]bool{}}
	ends := make([]int, len(t.parts))
	if !m.run(0, 0, ends) {
		return nil, false
	}
	vars := map[string]string{}
	start := 0
	for i, p := range t.parts {
		if p.lit == "" {
			if _, dup := vars[p.name]; !dup {
				vars[p.name] = uri[start:ends[i]]
			}
		}
		start = ends[i]
	}
	return vars, true
}

type matcher struct {
	t      *uriTemplate
	uri    string
	failed map[[2]int]bool // (part, position) pairs known not to match
}

func (m *matcher) run(i, pos int, ends []int) bool {
	if i == len(m.t.parts) {
		return pos == len(m.uri)
	}
	key := [2]int{i, pos}
	if m.failed[key] {
		return false
	}
	p := m.t.parts[i]
	if p.lit != "" {
		if strings.HasPrefix(m.uri[pos:], p.lit) {
			ends[i] = pos + len(p.lit)
			if m.run(i+1, ends[i], ends) {
				return true
			}
		}
		m.failed[key] = true
		return false
	}
	// The longest run of characters this variable may take.
	limit := len(m.uri)
	if p.op == 0 {
		if j := strings.IndexAny(m.uri[pos:], "/?#"); j >= 0 {
			limit = pos + j
		}
	}
	for end := limit; end > pos; end-- {
		ends[i] = end
		if m.run(i+1, end, ends) {
			return true
		}
	}
	m.failed[key] = true
	return false
}

// expand fills t's variables from vars, inserting values as they are.
func (t *uriTemplate) expand(vars map[string]string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.lit != "" {
			b.WriteString(p.lit)
		} else {
			b.WriteString(vars[p.name])
		}
	}
	return b.String()
}

// isNameByte reports whether c may appear in a variable name of a URI
// template (the bytes of a bare TOML key: letters, digits, '_' and '-').
func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
