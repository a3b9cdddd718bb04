package guest

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"unicode/utf8"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
)

// A call_tool envelope is scanned once: while validating it, the scan
// records the members of the request and of the context and the
// top-level members of the arguments, so that neither splitCallTool,
// splitContext nor the flat argument decoder walks them again. Whatever
// this pass does not take (see decodeCallTool) goes to decodeInputFast's
// general path, and from there to encoding/json, as before.

// argMember is a top-level member of a call's arguments object, as the
// envelope's scan found it; offsets are the arguments' own.
type argMember struct {
	k0, k1    int32 // the key literal, quotes included
	v0, v1    int32 // the value
	kPlain    bool  // the key has no escape and no byte ≥ 0x80
	str       bool  // the value is a string literal; then:
	esc, high bool  // it has escapes, bytes ≥ 0x80
}

// object scans the object at i (its '{'), calling member with each
// member's key and the start of its value; member scans the value and
// returns its end.
func (sc *scanner) object(i int, member func(k strInfo, v0 int) (int, error)) (int, error) {
	s := sc.s
	i = sc.space(i + 1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return i, errSyntax
		}
		k, err := sc.str(i)
		if err != nil {
			return i, err
		}
		i = sc.space(k.end)
		if i >= len(s) || s[i] != ':' {
			return i, errSyntax
		}
		v1, err := member(k, sc.space(i+1))
		if err != nil {
			return v1, err
		}
		i = sc.space(v1)
		if i >= len(s) {
			return i, errSyntax
		}
		switch s[i] {
		case ',':
			i = sc.space(i + 1)
		case '}':
			return i + 1, nil
		default:
			return i, errSyntax
		}
	}
}

// callEnvelope is the result of scanCallTool: raw spans of input.
type callEnvelope struct {
	request, context      []byte // the envelope's members, nil when absent
	name, args, meta      []byte // the request's members
	id, cmeta, pv, plugin []byte // the context's members (the last of each)
}

// scanCallTool validates input, a call_tool envelope, in one pass and
// records its parts in e, appends the top-level members of an object
// arguments to ms (offsets the arguments' own; membersOK then) and
// returns the big string values of input. It reports false when
// decodeCallTool cannot take the input from this pass alone: input is
// invalid or not an object, a key is escaped, repeated where that
// matters or case-folded, the request is neither an object nor null, the
// context is neither an object nor null or holds a null or a string
// member that is not plain. splitEnvelope, splitCallTool and
// splitContext decide the same cases the same way.
func scanCallTool(input []byte, e *callEnvelope, ms *[]argMember) (bigs []strInfo, membersOK, ok bool) {
	ok = true
	sc := scanner{s: input, onString: func(s strInfo) {
		if s.end-s.start >= bigString {
			bigs = append(bigs, s)
		}
	}}
	s := input
	argMembers := func(a0 int) (int, error) {
		return sc.object(a0, func(k strInfo, v0 int) (int, error) {
			m := argMember{k0: int32(k.start - a0), k1: int32(k.end - a0), kPlain: !k.esc && !k.high, v0: int32(v0 - a0)}
			var v1 int
			if v0 < len(s) && s[v0] == '"' {
				v, err := sc.str(v0)
				if err != nil {
					return v0, err
				}
				sc.onString(v)
				v1, m.str, m.esc, m.high = v.end, true, v.esc, v.high
			} else {
				var err error
				if v1, err = sc.value(v0, 3); err != nil {
					return v1, err
				}
			}
			m.v1 = int32(v1 - a0)
			*ms = append(*ms, m)
			return v1, nil
		})
	}
	request := func(k strInfo, v0 int) (int, error) {
		var v1 int
		var err error
		key := s[k.start:k.end]
		switch string(key) {
		case `"arguments"`:
			ok = ok && e.args == nil
			if v0 < len(s) && s[v0] == '{' && len(s) <= math.MaxInt32 {
				v1, err = argMembers(v0)
				membersOK = true
			} else {
				v1, err = sc.value(v0, 2)
			}
			e.args = s[v0:v1]
			return v1, err
		case `"name"`:
			ok = ok && e.name == nil
			v1, err = sc.value(v0, 2)
			e.name = s[v0:v1]
		case `"_meta"`:
			ok = ok && e.meta == nil
			v1, err = sc.value(v0, 2)
			e.meta = s[v0:v1]
		default:
			ok = ok && otherKey(key, `"name"`, `"arguments"`, `"_meta"`)
			v1, err = sc.value(v0, 2)
		}
		return v1, err
	}
	context := func(k strInfo, v0 int) (int, error) {
		v1, err := sc.value(v0, 2)
		if err != nil {
			return v1, err
		}
		value := s[v0:v1]
		if string(value) == "null" {
			ok = false
			return v1, nil
		}
		key := s[k.start:k.end]
		switch string(key) {
		case `"id"`:
			e.id = value
		case `"_meta"`:
			e.cmeta = value
		case `"protocolVersion"`:
			ok = ok && isPlainString(value)
			e.pv = value
		case `"plugin"`:
			ok = ok && isPlainString(value)
			e.plugin = value
		default:
			ok = ok && otherKey(key, `"id"`, `"_meta"`, `"protocolVersion"`, `"plugin"`)
		}
		return v1, nil
	}
	i := sc.space(0)
	if i >= len(s) || s[i] != '{' {
		return nil, false, false
	}
	end, err := sc.object(i, func(k strInfo, v0 int) (int, error) {
		var v1 int
		var err error
		key := s[k.start:k.end]
		switch string(key) {
		case `"request"`:
			var shaped bool
			v1, shaped, err = sc.objectOrNull(v0, request)
			ok = ok && e.request == nil && shaped
			e.request = s[v0:v1]
		case `"context"`:
			var shaped bool
			v1, shaped, err = sc.objectOrNull(v0, context)
			ok = ok && e.context == nil && shaped
			e.context = s[v0:v1]
		default:
			ok = ok && otherKey(key, `"request"`, `"context"`)
			v1, err = sc.value(v0, 1)
		}
		return v1, err
	})
	if err != nil || sc.space(end) != len(s) || !ok {
		return nil, false, false
	}
	return bigs, membersOK, true
}

// objectOrNull scans the value at v0: an object, walked with member, or
// any other value, which is as expected (shaped) only if it is null.
func (sc *scanner) objectOrNull(v0 int, member func(k strInfo, v0 int) (int, error)) (v1 int, shaped bool, err error) {
	if v0 < len(sc.s) && sc.s[v0] == '{' {
		v1, err = sc.object(v0, member)
		return v1, true, err
	}
	v1, err = sc.value(v0, 1)
	return v1, err == nil && string(sc.s[v0:v1]) == "null", err
}

// isPlainString reports whether plainString takes lit.
func isPlainString(lit []byte) bool {
	return len(lit) >= 2 && lit[0] == '"' && bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit)
}

// decodeCallTool is decodeInputFast for call_tool, from one pass over
// input: the context into ctx, the request into the result (nil for a
// null or absent request). It reports false when decodeInputFast must
// decide instead.
func decodeCallTool(ctx *Context, input []byte) (*abi.CallToolParams, bool) {
	var e callEnvelope
	ms := ctx.memberBuf[:0]
	bigs, membersOK, ok := scanCallTool(input, &e, &ms)
	if !ok {
		return nil, false
	}
	var req *abi.CallToolParams
	if e.request != nil && string(e.request) != "null" {
		req = &ctx.params
		*req = abi.CallToolParams{Arguments: e.args, Meta: e.meta}
		if e.name != nil {
			if req.Name, ok = plainString(e.name); !ok {
				var err error
				if req.Name, err = unmarshalString(e.name); err != nil {
					return nil, false
				}
			}
		}
	}
	var c abi.Context
	if e.id != nil || e.cmeta != nil {
		// One copy for both, as splitContext makes two.
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
	ctx.Context = c
	if req != nil {
		ctx.setBigArgs(input, req.Arguments, bigs)
		ctx.members, ctx.membersSet = ms, membersOK
	}
	return req, true
}

// argMembers returns the top-level members of args when args is the
// call's arguments object as decodeCallTool found it.
func (c *Context) argMembers(args []byte) ([]argMember, bool) {
	if c == nil || !c.membersSet || len(args) != len(c.bigsOf) || len(args) == 0 || &args[0] != &c.bigsOf[0] {
		return nil, false
	}
	return c.members, true
}

// decodeMembers is decode for args already scanned into ms: it sets the
// fields of the struct at dst from the members without scanning args
// again, with decode's rules.
func (p *flatPlan) decodeMembers(args []byte, ms []argMember, dst unsafe.Pointer) bool {
	for i := range ms {
		m := &ms[i]
		if !m.kPlain {
			return false
		}
		f, ok := p.lookup(args[m.k0+1 : m.k1-1])
		if !ok {
			return false
		}
		if f == nil {
			continue
		}
		v := args[m.v0:m.v1]
		if m.str {
			if f.kind != reflect.String {
				return false
			}
			*(*string)(unsafe.Add(dst, f.offset)) = unquote(v, strInfo{esc: m.esc, high: m.high})
		} else if !f.set(unsafe.Add(dst, f.offset), v) {
			return false
		}
	}
	return true
}
