package guest

import (
	"fmt"
	"net/url"
	"strings"
)

// uriTemplate is a parsed RFC 6570 template restricted to what can be
// matched back unambiguously: literal text, level-1 simple expressions
// {var} and level-2 reserved expressions {+var}, one variable each.
//
// A {var} value matches one or more characters other than '/', '?' and
// '#' (simple expansion percent-encodes those); a {+var} value matches one
// or more of any characters. Matched values are percent-decoded.
type uriTemplate struct {
	raw   string
	parts []tmplPart
}

type tmplPart struct {
	literal  string // when name == ""
	name     string
	reserved bool
}

func parseURITemplate(s string) (*uriTemplate, error) {
	t := &uriTemplate{raw: s}
	seen := map[string]bool{}
	for len(s) > 0 {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			if strings.IndexByte(s, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unmatched '}'", t.raw)
			}
			t.parts = append(t.parts, tmplPart{literal: s})
			break
		}
		if open > 0 {
			lit := s[:open]
			if strings.IndexByte(lit, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unmatched '}'", t.raw)
			}
			t.parts = append(t.parts, tmplPart{literal: lit})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unterminated expression", t.raw)
		}
		expr := s[open+1 : open+end]
		s = s[open+end+1:]
		p := tmplPart{name: expr}
		if strings.HasPrefix(expr, "+") {
			p = tmplPart{name: expr[1:], reserved: true}
		}
		if !validVarName(p.name) {
			return nil, fmt.Errorf("uri template %q: expression {%s} is not supported (only {name} and {+name})", t.raw, expr)
		}
		if seen[p.name] {
			return nil, fmt.Errorf("uri template %q: variable %q appears twice", t.raw, p.name)
		}
		seen[p.name] = true
		if n := len(t.parts); n > 0 && t.parts[n-1].name != "" {
			return nil, fmt.Errorf("uri template %q: two expressions must be separated by literal text", t.raw)
		}
		t.parts = append(t.parts, p)
	}
	return t, nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// vars returns the template's variable names in order.
func (t *uriTemplate) vars() []string {
	var names []string
	for _, p := range t.parts {
		if p.name != "" {
			names = append(names, p.name)
		}
	}
	return names
}

// match reports whether uri matches the template and returns the values
// of its variables. Where a reserved variable could end at several places
// the longest match wins.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	vals := map[string]string{}
	if !t.matchFrom(0, uri, vals) {
		return nil, false
	}
	return vals, true
}

func (t *uriTemplate) matchFrom(i int, s string, vals map[string]string) bool {
	if i == len(t.parts) {
		return s == ""
	}
	p := t.parts[i]
	if p.name == "" {
		rest, ok := strings.CutPrefix(s, p.literal)
		return ok && t.matchFrom(i+1, rest, vals)
	}
	// The value ends where the next literal starts (or at the end).
	limit := len(s)
	if !p.reserved {
		if j := strings.IndexAny(s, "/?#"); j >= 0 {
			limit = j
		}
	}
	next := ""
	if i+1 < len(t.parts) {
		next = t.parts[i+1].literal
	}
	for end := limit; end >= 1; end-- {
		if next != "" && !strings.HasPrefix(s[end:], next) {
			continue
		}
		if next == "" && end != len(s) {
			return false // a final variable takes the rest, or nothing matches
		}
		v, err := url.PathUnescape(s[:end])
		if err != nil {
			v = s[:end]
		}
		vals[p.name] = v
		if t.matchFrom(i+1, s[end:], vals) {
			return true
		}
		delete(vals, p.name)
	}
	return false
}
