package config

import (
	"strconv"
	"strings"
)

// locator finds the line of a key in a TOML document. BurntSushi/toml
// reports positions only for syntax errors, so a validation error would
// otherwise have no line. The scan understands headers, dotted and quoted
// keys, strings (including multi-line ones), comments and values that span
// lines; it is good enough for hand-written files and falls back to the
// line of the enclosing table when it cannot find a key.
type locator struct {
	tables map[string]*tableLines // "" (top level), "server", "plugin[0]", …
}

type tableLines struct {
	line int            // the header's line (0 for the top level)
	keys map[string]int // dotted key relative to the table → first line
}

// tableID names a table for the locator: "server", or "plugin[i]" for the
// i-th [[plugin]] table (0-based).
func tableID(name string, index int) string {
	if name == "plugin" {
		return "plugin[" + strconv.Itoa(index) + "]"
	}
	return name
}

func newLocator(text string) *locator {
	l := &locator{tables: map[string]*tableLines{"": {keys: map[string]int{}}}}
	cur := l.tables[""]
	var prefix string // dotted key prefix from a sub-table header like [plugin.env]
	arrays := map[string]int{}
	var sc scanState
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if sc.busy() {
			sc.scan(line)
			continue
		}
		s := strings.TrimSpace(line)
		switch {
		case s == "" || s[0] == '#':
			continue
		case strings.HasPrefix(s, "[["):
			path, _ := parseKeyPath(s[2:])
			if len(path) == 0 {
				continue
			}
			name := strings.Join(path, ".")
			if len(path) == 1 {
				id := tableID(path[0], arrays[name])
				arrays[name]++
				l.note("", path[0], n)
				cur = l.table(id, n)
				prefix = ""
			} else {
				cur, prefix = l.subTable(path, arrays, n)
			}
		case s[0] == '[':
			path, _ := parseKeyPath(s[1:])
			if len(path) == 0 {
				continue
			}
			if len(path) == 1 {
				if path[0] == "plugin" {
					// [plugin] is a type error the parser reports; keep going.
					cur, prefix = l.tables[""], "plugin"
					l.note("", "plugin", n)
					continue
				}
				l.note("", path[0], n)
				cur = l.table(path[0], n)
				prefix = ""
			} else {
				cur, prefix = l.subTable(path, arrays, n)
			}
		default:
			path, rest := parseKeyPath(s)
			if len(path) > 0 {
				full := path
				if prefix != "" {
					full = append(strings.Split(prefix, "."), path...)
				}
				for j := 1; j <= len(full); j++ {
					k := strings.Join(full[:j], ".")
					if _, ok := cur.keys[k]; !ok {
						cur.keys[k] = n
					}
				}
				if r := strings.TrimSpace(rest); strings.HasPrefix(r, "=") {
					sc.scan(r[1:])
				}
			}
		}
	}
	return l
}

// subTable handles [a.b…] and [[a.b…]] headers: keys under [plugin.env]
// belong to the last [[plugin]] table with the prefix "env".
func (l *locator) subTable(path []string, arrays map[string]int, n int) (*tableLines, string) {
	id := path[0]
	if c, ok := arrays[path[0]]; ok && c > 0 {
		id = tableID(path[0], c-1)
	}
	t := l.table(id, n)
	rel := strings.Join(path[1:], ".")
	for j := 2; j <= len(path); j++ {
		k := strings.Join(path[1:j], ".")
		if _, ok := t.keys[k]; !ok {
			t.keys[k] = n
		}
	}
	if id == path[0] {
		l.note("", path[0], n)
	}
	return t, rel
}

func (l *locator) table(id string, line int) *tableLines {
	t, ok := l.tables[id]
	if !ok {
		t = &tableLines{line: line, keys: map[string]int{}}
		l.tables[id] = t
	}
	return t
}

func (l *locator) note(id, key string, line int) {
	t := l.tables[id]
	if _, ok := t.keys[key]; !ok {
		t.keys[key] = line
	}
}

// line returns the line of key (dotted, relative to the table) in the table
// id, trying ever shorter prefixes of key, then the table's header, then
// the top-level key that holds the table. 0 means unknown.
func (l *locator) line(id string, key string) int {
	if l == nil {
		return 0
	}
	t, ok := l.tables[id]
	if ok {
		for k := key; k != ""; {
			if n, ok := t.keys[k]; ok {
				return n
			}
			i := strings.LastIndexByte(k, '.')
			if i < 0 {
				break
			}
			k = k[:i]
		}
		if t.line > 0 {
			return t.line
		}
	}
	name, _, _ := strings.Cut(id, "[")
	return l.tables[""].keys[name]
}

// parseKeyPath reads a dotted TOML key (bare or quoted parts) from the start
// of s and returns its parts and what follows. It stops at '=' or ']'.
func parseKeyPath(s string) (path []string, rest string) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, ""
		}
		var part string
		switch s[0] {
		case '"':
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, ""
			}
			if u, err := strconv.Unquote(s[:end+1]); err == nil {
				part = u
			} else {
				part = s[1:end]
			}
			s = s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, ""
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			end := 0
			for end < len(s) && isBareKeyByte(s[end]) {
				end++
			}
			if end == 0 {
				return nil, ""
			}
			part, s = s[:end], s[end:]
		}
		path = append(path, part)
		s = strings.TrimLeft(s, " \t")
		if s == "" || s[0] != '.' {
			return path, s
		}
		s = s[1:]
	}
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// scanState follows a value across lines: open brackets and multi-line
// strings, so that lines inside them are not mistaken for keys.
type scanState struct {
	depth int
	multi string // `"""` or `'''` while inside a multi-line string
}

func (st *scanState) busy() bool { return st.depth > 0 || st.multi != "" }

func (st *scanState) scan(s string) {
	for i := 0; i < len(s); i++ {
		if st.multi != "" {
			if st.multi == `"""` && s[i] == '\\' {
				i++
				continue
			}
			if strings.HasPrefix(s[i:], st.multi) {
				// A closing delimiter may be followed by up to two quotes
				// that belong to the string.
				j := i + 3
				for j < len(s) && j < i+5 && s[j] == st.multi[0] {
					j++
				}
				st.multi = ""
				i = j - 1
			}
			continue
		}
		switch c := s[i]; c {
		case '#':
			return
		case '"', '\'':
			if strings.HasPrefix(s[i:], strings.Repeat(string(c), 3)) {
				st.multi = strings.Repeat(string(c), 3)
				i += 2
				continue
			}
			for i++; i < len(s) && s[i] != c; i++ {
				if c == '"' && s[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			st.depth++
		case ']', '}':
			if st.depth > 0 {
				st.depth--
			}
		}
	}
}
