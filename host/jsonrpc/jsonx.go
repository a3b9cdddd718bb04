package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcphost/mcphost/internal/jsonscan"
)

// A small validating JSON scanner. It exists because the hot path
// (one line in, one line out) must not pay for reflection: Decode finds the
// envelope members in a single pass, and results from plugins are checked and
// rewritten without building trees. Its notion of validity matches
// json.Valid (FuzzDecode checks that).

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// ScanValue returns the index just past the JSON value starting at b[i]
// (which must not be whitespace), or -1 if it is not valid JSON. depth is
// the nesting depth of b[i] (0 at the top level).
func ScanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '{':
		return scanObject(b, i, depth+1)
	case c == '[':
		return scanArray(b, i, depth+1)
	case c == '"':
		return scanString(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	}
	return -1
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

func scanString(b []byte, i int) int {
	i++ // opening quote
	for i < len(b) {
		// Plain bytes 8 at a time; what follows is one that is not.
		i, _ = jsonscan.StringRun(b, i)
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 5
			default:
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func scanArray(b []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = ScanValue(b, i, depth); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

func scanObject(b []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		if i = scanString(b, i); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = ScanValue(b, SkipSpace(b, i+1), depth); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// Valid reports whether b is one JSON value, surrounded by optional
// whitespace.
func Valid(b []byte) bool {
	i := ScanValue(b, SkipSpace(b, 0), 0)
	return i >= 0 && SkipSpace(b, i) == len(b)
}

// IsObject reports whether the valid JSON value v is an object.
func IsObject(v []byte) bool {
	i := SkipSpace(v, 0)
	return i < len(v) && v[i] == '{'
}

// EachMember calls fn for each member of obj, in order, until fn returns
// false. key is the raw key without its quotes (escapes are not decoded), val
// the raw value. It reports false if obj is not a valid JSON object.
func EachMember(obj []byte, fn func(key, val []byte) bool) bool {
	return walkObject(obj, SkipSpace(obj, 0), fn) != -1
}

// walkObject is eachMember from b[i]: it returns the index just past the
// object, -1 if it is not valid, or -2 if fn stopped the walk.
func walkObject(obj []byte, i int, fn func(key, val []byte) bool) int {
	return walkObjectDepth(obj, i, 1, nil, nil, fn)
}

// walkObjectDepth is walkObject for an object whose members sit at depth.
// With params not nil, a "params" member whose value is an object is
// walked in the same pass, instead of being scanned as a whole, and its
// members replace *params. With into not nil, every member is appended to
// *into (fn may then be nil).
func walkObjectDepth(obj []byte, i, depth int, params, into *Members, fn func(key, val []byte) bool) int {
	if i >= len(obj) || obj[i] != '{' {
		return -1
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return -1
		}
		k := scanString(obj, i)
		if k < 0 {
			return -1
		}
		key := obj[i+1 : k-1]
		i = SkipSpace(obj, k)
		if i >= len(obj) || obj[i] != ':' {
			return -1
		}
		v := SkipSpace(obj, i+1)
		var e int
		if params != nil && v < len(obj) && obj[v] == '{' && KeyIs(key, "params") {
			if depth+1 > maxDepth {
				return -1
			}
			*params = (*params)[:0]
			e = walkObjectDepth(obj, v, depth+1, nil, params, nil)
		} else {
			e = ScanValue(obj, v, depth)
		}
		if e < 0 {
			return -1
		}
		if into != nil {
			if *into == nil {
				*into = make(Members, 0, 4) // tools/call: name, arguments, _meta, and one more
			}
			*into = append(*into, RawMember{key, obj[v:e]})
		}
		if fn != nil && !fn(key, obj[v:e]) {
			return -2
		}
		i = SkipSpace(obj, e)
		if i >= len(obj) {
			return -1
		}
		switch obj[i] {
		case ',':
			i = SkipSpace(obj, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// EachElement calls fn for each element of arr until fn returns false. It
// reports false if arr is not a valid JSON array.
func EachElement(arr []byte, fn func(val []byte) bool) bool {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = SkipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for {
		e := ScanValue(arr, i, 1)
		if e < 0 {
			return false
		}
		if !fn(arr[i:e]) {
			return true
		}
		i = SkipSpace(arr, e)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ',':
			i = SkipSpace(arr, i+1)
		case ']':
			return true
		default:
			return false
		}
	}
}

// Member returns the raw value of obj's Member key (the last one if
// repeated), or nil.
func Member(obj []byte, key string) []byte {
	var out []byte
	EachMember(obj, func(k, v []byte) bool {
		if KeyIs(k, key) {
			out = v
		}
		return true
	})
	return out
}

// KeyIs compares a raw key (escapes not decoded) with name.
func KeyIs(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	s, ok := Unquote(append(append([]byte{'"'}, raw...), '"'))
	return ok && s == name
}

// Unquote decodes a raw JSON string value (with its quotes).
func Unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// RewriteObject appends obj to dst with each member passed through fn,
// which appends the member's (possibly changed) value and reports whether to
// keep the member at all. Member order is kept.
func RewriteObject(dst, obj []byte, fn func(dst, key, val []byte) ([]byte, bool)) []byte {
	dst = append(dst, '{')
	n := 0
	EachMember(obj, func(key, val []byte) bool {
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
		var keep bool
		if dst, keep = fn(dst, key, val); keep {
			n++
		} else {
			dst = dst[:mark]
		}
		return true
	})
	return append(dst, '}')
}

// RewriteArray appends arr to dst with each element passed through fn.
func RewriteArray(dst, arr []byte, fn func(dst, val []byte) []byte) []byte {
	dst = append(dst, '[')
	n := 0
	EachElement(arr, func(val []byte) bool {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = fn(dst, val)
		n++
		return true
	})
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; HTML characters are not escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// CompactLine returns msg without newlines: valid JSON holds a newline only
// as insignificant whitespace, so compacting removes every one.
func CompactLine(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return msg
	}
	var buf bytes.Buffer
	if json.Compact(&buf, msg) != nil {
		return bytes.ReplaceAll(bytes.ReplaceAll(msg, []byte{'\n'}, []byte{' '}), []byte{'\r'}, []byte{' '})
	}
	return buf.Bytes()
}
