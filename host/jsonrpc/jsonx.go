package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// Reading and rewriting JSON values in place, on top of package jsonscan:
// the hot path (one line in, one line out) must not pay for reflection.
// Decode finds the envelope members in a single pass, and results from
// plugins are checked and rewritten without building trees.

// IsObject reports whether the valid JSON value v is an object.
func IsObject(v []byte) bool {
	i := jsonscan.SkipSpace(v, 0)
	return i < len(v) && v[i] == '{'
}

// EachMember calls fn for each member of obj, in order, until fn returns
// false. key is the raw key without its quotes (escapes are not decoded), val
// the raw value. It reports false if obj is not a valid JSON object.
func EachMember(obj []byte, fn func(key, val []byte) bool) bool {
	return walkObject(obj, jsonscan.SkipSpace(obj, 0), fn) != -1
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
	i = jsonscan.SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return -1
		}
		k, err := jsonscan.ScanString(obj, i)
		if err != nil {
			return -1
		}
		key := obj[i+1 : k.End-1]
		i = jsonscan.SkipSpace(obj, k.End)
		if i >= len(obj) || obj[i] != ':' {
			return -1
		}
		v := jsonscan.SkipSpace(obj, i+1)
		var e int
		if params != nil && v < len(obj) && obj[v] == '{' && KeyIs(key, "params") {
			if depth >= jsonscan.MaxDepth {
				return -1
			}
			*params = (*params)[:0]
			e = walkObjectDepth(obj, v, depth+1, nil, params, nil)
		} else if e, err = jsonscan.ScanValue(obj, v, depth); err != nil {
			return -1
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
		i = jsonscan.SkipSpace(obj, e)
		if i >= len(obj) {
			return -1
		}
		switch obj[i] {
		case ',':
			i = jsonscan.SkipSpace(obj, i+1)
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
	i := jsonscan.SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = jsonscan.SkipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for {
		e, err := jsonscan.ScanValue(arr, i, 1)
		if err != nil {
			return false
		}
		if !fn(arr[i:e]) {
			return true
		}
		i = jsonscan.SkipSpace(arr, e)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ',':
			i = jsonscan.SkipSpace(arr, i+1)
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

// Unquote decodes a raw JSON value that is one string literal (with its
// quotes); ok is false for any other value.
func Unquote(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	info, err := jsonscan.ScanString(raw, 0)
	if err != nil || info.End != len(raw) {
		return "", false
	}
	return jsonscan.Unquote(raw, info), true
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
