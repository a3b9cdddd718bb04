package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The readers below report a problem with the key they read and return
// ok=false, so that parsing goes on and every problem is reported.

type configParser struct {
	file string
	dir  string
	loc  *locator
	ck   Checks
	errs []*ConfigError
}

// section is the table being read, for error messages.
type section struct {
	p     *configParser
	table string // "", "server" or "plugin"
	index int    // 1-based [[plugin]] index
	name  string // plugin name once known
}

func (s section) line(key string) int {
	id := s.table
	if s.table == "plugin" {
		id = tableID("plugin", s.index-1)
	}
	return s.p.loc.line(id, key)
}

func (s section) errf(key, format string, args ...any) {
	s.p.errs = append(s.p.errs, &ConfigError{
		File: s.p.file, Line: s.line(key), Table: s.table, Plugin: s.name, Index: s.index,
		Key: key, Msg: fmt.Sprintf(format, args...),
	})
}

// unknown reports every key of m that is not in known, in file order.
func (s section) unknown(m map[string]any, known []string) {
	var bad []string
	for k := range m {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	slices.SortFunc(bad, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.line(a), s.line(b)), strings.Compare(a, b))
	})
	for _, k := range bad {
		if hint := Suggest(k, known); hint != "" {
			s.errf(k, "unknown key (did you mean %q?)", hint)
		} else {
			s.errf(k, "unknown key")
		}
	}
}

func (s section) str(m map[string]any, key string) (string, bool) {
	v, ok := m[key]
	if !ok {
		return "", false
	}
	str, ok := v.(string)
	if !ok {
		s.errf(key, "want a string, got %s", tomlType(v))
	}
	return str, ok
}

func (s section) integer(m map[string]any, key string, lo, hi int64) (int64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		s.errf(key, "want an integer, got %s", tomlType(v))
		return 0, false
	}
	if n < lo || n > hi {
		s.errf(key, "%d is out of range [%d, %d]", n, lo, hi)
		return 0, false
	}
	return n, true
}

func (s section) duration(m map[string]any, key string, lo, hi time.Duration) (time.Duration, bool) {
	str, ok := s.str(m, key)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(str)
	if err != nil {
		s.errf(key, "invalid duration %q (want a number and a unit, like \"5s\" or \"1m30s\")", str)
		return 0, false
	}
	if d < lo || d > hi {
		s.errf(key, "%s is out of range [%s, %s]", d, lo, hi)
		return 0, false
	}
	return d, true
}

// bytes reads a size given as an integer number of bytes or a string with
// a unit ("64MiB").
func (s section) bytes(m map[string]any, key string) (int64, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	switch v := v.(type) {
	case int64:
		if v < 0 {
			s.errf(key, "size %d is negative", v)
			return 0, false
		}
		return v, true
	case string:
		n, err := ParseBytes(v)
		if err != nil {
			s.errf(key, "%v", err)
			return 0, false
		}
		return n, true
	default:
		s.errf(key, "want a size (an integer or a string like \"64MiB\"), got %s", tomlType(v))
		return 0, false
	}
}

// pages reads a memory size and converts it to 64 KiB pages (rounded up).
func (s section) pages(m map[string]any, key string) (uint32, bool) {
	n, ok := s.bytes(m, key)
	if !ok {
		return 0, false
	}
	pages := bytesToPages(n)
	if pages < 1 || pages > maxMemoryPages {
		s.errf(key, "%d bytes is out of range [64KiB, 4GiB]", n)
		return 0, false
	}
	return uint32(pages), true
}

func (s section) strings(m map[string]any, key string) ([]string, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	arr, ok := v.([]any)
	if !ok {
		s.errf(key, "want an array of strings, got %s", tomlType(v))
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		str, ok := e.(string)
		if !ok {
			s.errf(key, "element %d: want a string, got %s", i, tomlType(e))
			return nil, false
		}
		out = append(out, str)
	}
	return out, true
}

// stringMap reads a table of scalars. Integers, floats and booleans are
// accepted and kept in their TOML spelling, since Extism config and the
// environment are strings.
func (s section) stringMap(m map[string]any, key string) (map[string]string, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	t, ok := v.(map[string]any)
	if !ok {
		s.errf(key, "want a table, got %s", tomlType(v))
		return nil, false
	}
	out := make(map[string]string, len(t))
	good := true
	for k, e := range t {
		sub := key + "." + k
		switch e := e.(type) {
		case string:
			out[k] = e
		case int64:
			out[k] = strconv.FormatInt(e, 10)
		case float64:
			out[k] = strconv.FormatFloat(e, 'g', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(e)
		default:
			s.errf(sub, "want a string, got %s", tomlType(e))
			good = false
		}
	}
	return out, good
}
