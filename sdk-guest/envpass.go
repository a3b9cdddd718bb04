package guest

import (
	"bytes"
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// An export's input envelope is scanned once, by package jsonscan: while
// validating it, the scan records the members of the request (of a
// call_tool request: its name, arguments and _meta, and the top-level
// members of the arguments) and of the context, and finds the big
// strings, so that no later step walks them again. encoding/json is the
// reference: whatever this pass does not take (see scanEnvelope) goes to
// decodeInputSlow, which decodes and reports errors as encoding/json
// does. Under Wasm encoding/json's reflection costs a Go guest about
// 14 µs a call for the context's four members alone.

// envelope is the result of scanEnvelope: raw spans of input.
type envelope struct {
	request, context      []byte // the envelope's members, nil when absent
	name, args, meta      []byte // a call_tool request's members
	id, cmeta, pv, plugin []byte // the context's members (the last of each)
	slowContext           bool   // encoding/json must decode the context
}

// scanEnvelope validates input, an export's envelope, in one pass and
// records its parts in e. With call set the request is a call_tool's:
// its members are recorded too, the top-level members of an object
// arguments are appended to ms (offsets the arguments' own; membersOK
// then), and the big string values of input are returned.
//
// It reports false when decodeInputFast cannot take the input from this
// pass: input is invalid or not an object, an envelope key is escaped,
// repeated or case-folded, or a call_tool request is neither an object
// nor null or has such a key. A context that this pass cannot decode as
// encoding/json would (not an object or null, a null or non-plain string
// member, an escaped or case-folded key) sets e.slowContext.
func scanEnvelope(input []byte, call bool, e *envelope, ms *[]abi.ArgMember) (bigs []jsonscan.String, membersOK, ok bool) {
	ok = true
	s := input
	sc := jsonscan.Scanner{OnString: func(str jsonscan.String) {
		if str.End-str.Start >= bigString {
			bigs = append(bigs, str)
		}
	}}
	request := func(k jsonscan.String, v0 int) (int, error) {
		var v1 int
		var err error
		key := s[k.Start:k.End]
		switch string(key) {
		case `"arguments"`:
			ok = ok && e.args == nil
			if v0 < len(s) && s[v0] == '{' && len(s) <= math.MaxInt32 {
				v1, err = scanArgMembers(sc, s, v0, 2, ms)
				membersOK = true
			} else {
				v1, err = sc.Value(s, v0, 2)
			}
			e.args = s[v0:v1]
			return v1, err
		case `"name"`:
			ok = ok && e.name == nil
			v1, err = sc.Value(s, v0, 2)
			e.name = s[v0:v1]
		case `"_meta"`:
			ok = ok && e.meta == nil
			v1, err = sc.Value(s, v0, 2)
			e.meta = s[v0:v1]
		default:
			ok = ok && otherKey(key, `"name"`, `"arguments"`, `"_meta"`)
			v1, err = sc.Value(s, v0, 2)
		}
		return v1, err
	}
	context := func(k jsonscan.String, v0 int) (int, error) {
		v1, err := sc.Value(s, v0, 2)
		if err != nil {
			return v1, err
		}
		value := s[v0:v1]
		if string(value) == "null" {
			e.slowContext = true
			return v1, nil
		}
		key := s[k.Start:k.End]
		switch string(key) {
		case `"id"`:
			e.id = value
		case `"_meta"`:
			e.cmeta = value
		case `"protocolVersion"`:
			e.slowContext = e.slowContext || !isPlainString(value)
			e.pv = value
		case `"plugin"`:
			e.slowContext = e.slowContext || !isPlainString(value)
			e.plugin = value
		default:
			e.slowContext = e.slowContext || !otherKey(key, `"id"`, `"_meta"`, `"protocolVersion"`, `"plugin"`)
		}
		return v1, nil
	}
	i := jsonscan.SkipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false, false
	}
	end, err := sc.Object(s, i, func(k jsonscan.String, v0 int) (int, error) {
		var v1 int
		var err error
		key := s[k.Start:k.End]
		switch string(key) {
		case `"request"`:
			ok = ok && e.request == nil
			if call {
				var shaped bool
				v1, shaped, err = objectOrNull(sc, s, v0, request)
				ok = ok && shaped
			} else {
				v1, err = sc.Value(s, v0, 1)
			}
			e.request = s[v0:v1]
		case `"context"`:
			ok = ok && e.context == nil
			var shaped bool
			v1, shaped, err = objectOrNull(sc, s, v0, context)
			e.slowContext = e.slowContext || !shaped
			e.context = s[v0:v1]
		default:
			ok = ok && otherKey(key, `"request"`, `"context"`)
			v1, err = sc.Value(s, v0, 1)
		}
		return v1, err
	})
	if err != nil || jsonscan.SkipSpace(s, end) != len(s) || !ok {
		return nil, false, false
	}
	return bigs, membersOK, true
}

// objectOrNull scans the value at v0: an object, walked with member, or
// any other value, which is as expected (shaped) only if it is null.
func objectOrNull(sc jsonscan.Scanner, s []byte, v0 int, member func(k jsonscan.String, v0 int) (int, error)) (v1 int, shaped bool, err error) {
	if v0 < len(s) && s[v0] == '{' {
		v1, err = sc.Object(s, v0, member)
		return v1, true, err
	}
	v1, err = sc.Value(s, v0, 1)
	return v1, err == nil && string(s[v0:v1]) == "null", err
}

// scanArgMembers scans the object at a0 in s, a call's arguments nested
// depth levels deep, appending its top-level members to ms with offsets
// from a0 (abi.ScanArgMembers).
func scanArgMembers(sc jsonscan.Scanner, s []byte, a0, depth int, ms *[]abi.ArgMember) (int, error) {
	return abi.ScanArgMembers(sc, s, a0, depth, func(m abi.ArgMember) { *ms = append(*ms, m) })
}

// otherKey reports whether encoding/json matches the raw key literal to
// none of names (literals too): key has no escape and is none of them,
// even ignoring case.
func otherKey(key []byte, names ...string) bool {
	if bytes.IndexByte(key, '\\') >= 0 {
		return false
	}
	for _, name := range names {
		if bytes.EqualFold(key, []byte(name)) {
			return false
		}
	}
	return true
}

// isPlainString reports whether lit, a valid JSON value, is a string
// literal that encoding/json copies as is: no escape, valid UTF-8.
func isPlainString(lit []byte) bool {
	return len(lit) >= 2 && lit[0] == '"' && bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit)
}

// decodeInputFast is decodeInput for well-formed input: one validating
// pass over the envelope (scanEnvelope), the context decoded from it,
// and a call_tool request's arguments neither scanned again nor copied.
// It reports false when decodeInput must run instead, which then reports
// the input's errors.
func decodeInputFast[T any](ctx *Context, input []byte) (*T, bool) {
	_, call := any((*T)(nil)).(*abi.CallToolParams)
	var e envelope
	ms := ctx.memberBuf[:0]
	bigs, membersOK, ok := scanEnvelope(input, call, &e, &ms)
	if !ok {
		return nil, false
	}
	c, ok := e.callContext()
	if !ok {
		return nil, false
	}
	var req *T
	if e.request != nil && string(e.request) != "null" {
		if !call {
			req = new(T)
			if json.Unmarshal(e.request, req) != nil {
				return nil, false
			}
		} else {
			p := &ctx.params
			*p = abi.CallToolParams{Arguments: e.args, Meta: e.meta}
			if e.name != nil {
				if isPlainString(e.name) {
					p.Name = string(e.name[1 : len(e.name)-1])
				} else if p.Name, ok = unmarshalString(e.name); !ok {
					return nil, false
				}
			}
			ctx.setBigArgs(input, p.Arguments, bigs)
			ctx.members, ctx.membersSet = ms, membersOK
			req = any(p).(*T)
		}
	}
	ctx.Context = c
	return req, true
}

// callContext returns the context the envelope's scan recorded, decoded
// as encoding/json decodes it.
func (e *envelope) callContext() (abi.Context, bool) {
	if e.slowContext {
		return unmarshalContext(e.context)
	}
	var c abi.Context
	if e.id != nil || e.cmeta != nil {
		// One copy for both.
		raw := make([]byte, 0, len(e.id)+len(e.cmeta))
		if e.id != nil {
			raw = append(raw, e.id...)
			c.ID = json.RawMessage(raw[:len(raw):len(raw)])
		}
		if e.cmeta != nil {
			n := len(raw)
			raw = append(raw, e.cmeta...)
			c.Meta = json.RawMessage(raw[n:len(raw):len(raw)])
		}
	}
	if e.pv != nil {
		c.ProtocolVersion = string(e.pv[1 : len(e.pv)-1])
	}
	if e.plugin != nil {
		c.Plugin = string(e.plugin[1 : len(e.plugin)-1])
	}
	return c, true
}

// unmarshalContext is encoding/json's decoding of an envelope's context,
// apart so that only this rare path puts the context on the heap.
func unmarshalContext(cc []byte) (abi.Context, bool) {
	var c abi.Context
	err := json.Unmarshal(cc, &c)
	return c, err == nil
}

// unmarshalString is encoding/json's decoding of a string, apart so
// that only this rare path puts the result on the heap.
func unmarshalString(lit []byte) (string, bool) {
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err == nil
}

// argMembers returns the top-level members of args when args is the
// call's arguments object as decodeInputFast found it.
func (c *Context) argMembers(args []byte) ([]abi.ArgMember, bool) {
	if c == nil || !c.membersSet || len(args) != len(c.bigsOf) || len(args) == 0 || &args[0] != &c.bigsOf[0] {
		return nil, false
	}
	return c.members, true
}
