package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"

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
	_, err := walkObject(obj, jsonscan.SkipSpace(obj, 0), 1, nil, nil, fn)
	return err == nil || err == errStopped
}

// errStopped is walkObject's error when fn stopped the walk.
var errStopped = errors.New("stopped")

// walkObject calls fn for each member of the object at obj[i], whose
// members sit at depth, until fn returns false (errStopped), and returns
// the index just past the object. With params not nil, a "params" member
// whose value is an object is walked in the same pass, instead of being
// scanned as a whole, and its members replace *params. With into not nil,
// every member is appended to *into (fn may then be nil).
func walkObject(obj []byte, i, depth int, params, into *Members, fn func(key, val []byte) bool) (int, error) {
	return jsonscan.Scanner{}.Object(obj, i, func(k jsonscan.String, v int) (int, error) {
		key := obj[k.Start+1 : k.End-1]
		var e int
		var err error
		if params != nil && v < len(obj) && obj[v] == '{' && KeyIs(key, "params") {
			if depth >= jsonscan.MaxDepth {
				return v, jsonscan.ErrSyntax
			}
			params.reset()
			e, err = walkObject(obj, v, depth+1, nil, params, nil)
		} else {
			e, err = jsonscan.ScanValue(obj, v, depth)
		}
		if err != nil {
			return e, err
		}
		if into != nil {
			into.add(obj, k.Start+1, k.End-1, v, e)
		}
		if fn != nil && !fn(key, obj[v:e]) {
			return e, errStopped
		}
		return e, nil
	})
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
	k, ok := keyName(raw)
	return ok && string(k) == name
}

// keyName is the name a member key's raw text (without its quotes)
// spells: raw itself unless it holds an escape; ok is false for a bad
// escape.
func keyName(raw []byte) (name []byte, ok bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	s, ok := Unquote(append(append([]byte{'"'}, raw...), '"'))
	return []byte(s), ok
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

// SetMember returns obj with key set to val (replaced in place, or added
// at the end). A nil or non-object obj becomes {key: val}.
func SetMember(obj []byte, key string, val []byte) []byte {
	if !IsObject(obj) {
		obj = []byte("{}")
	}
	found := false
	out := RewriteObject(nil, obj, func(dst, k, v []byte) ([]byte, bool) {
		if KeyIs(k, key) {
			if found {
				return dst, false
			}
			found = true
			return append(dst, val...), true
		}
		return append(dst, v...), true
	})
	if found {
		return out
	}
	out = out[:len(out)-1]
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = jsonscan.AppendString(out, key)
	out = append(out, ':')
	out = append(out, val...)
	return append(out, '}')
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
