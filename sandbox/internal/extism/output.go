package extism

import (
	"bytes"
	"fmt"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// Reading a guest's output: one validating pass that checks its shape and
// finds the members the host needs.

// checkShape returns "" when out is one JSON object with member of the
// given kind, and what is wrong otherwise.
func checkShape(out []byte, member string, kind byte) string {
	v, ok, isObject := topMember(out, member)
	return shapeError(out, member, kind, v, ok, isObject)
}

// ReadToolResult reads out, a CallToolResult, in one pass: it must be an
// object with a "content" array; "" when it is, and what is wrong
// otherwise. Every kind of Guest reads a tool's answer with it.
func ReadToolResult(out []byte) (r ToolResult, msg string) {
	var content []byte
	var found bool
	isObject := jsonscan.Members(out, func(k jsonscan.String, raw []byte) {
		key := out[k.Start+1 : k.End-1] // a plain key is its literal
		if k.Escaped || k.High {
			key = []byte(jsonscan.Unquote(out[k.Start:k.End], k))
		}
		switch string(key) {
		case "content":
			content, found = raw, true
		case "isError":
			r.IsError = string(raw) == "true"
		case "structuredContent":
			r.Structured = raw
		}
	})
	if msg := shapeError(out, "content", '[', content, found, isObject); msg != "" {
		return ToolResult{}, msg
	}
	r.JSON = out
	return r, ""
}

// shapeError is checkShape's verdict on what one pass over out found:
// member's value v, whether it was there, and whether out is an object.
func shapeError(out []byte, member string, kind byte, v []byte, ok, isObject bool) string {
	if !isObject {
		if !jsonscan.Valid(out) {
			return "invalid JSON: " + snippet(out)
		}
		if t := bytes.TrimSpace(out); bytes.Equal(t, []byte("null")) {
			return "not a JSON object: null"
		}
		return "not a JSON object: " + snippet(out)
	}
	if !ok {
		return fmt.Sprintf("missing %q", member)
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != kind {
		want := "an array"
		if kind == '{' {
			want = "an object"
		}
		return fmt.Sprintf("%q is not %s", member, want)
	}
	return ""
}

// topMember returns the raw value of the last member named key of the
// JSON object out (encoding/json's choice among duplicates), whether it
// is present, and whether out is a valid object at all; one pass.
func topMember(out []byte, key string) (val []byte, found, isObject bool) {
	isObject = jsonscan.Members(out, func(k jsonscan.String, raw []byte) {
		lit := out[k.Start:k.End]
		if len(lit) == len(key)+2 && string(lit[1:len(lit)-1]) == key ||
			k.Escaped && jsonscan.Unquote(lit, k) == key {
			val, found = raw, true
		}
	})
	return val, found, isObject
}

// snippet shortens guest output for a message.
func snippet(b []byte) string {
	const n = 120
	if len(b) > n {
		return fmt.Sprintf("%q…", b[:n])
	}
	return fmt.Sprintf("%q", b)
}
