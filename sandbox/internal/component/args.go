package component

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// argsFromJSON converts a tool call's arguments, the JSON object s (empty
// or null: none), to the values of params in their order: one pass over
// the bytes, each value checked against its WIT type as it is read, no
// tree in between. What does not fit is an *ArgumentError, saying where
// ("p.label: want a string, got a number"); JSON that is not valid is one
// whatever else is wrong with it.
func argsFromJSON(params []Field, s []byte) ([]any, error) {
	d := argDecoder{s: s}
	i := jsonscan.SkipSpace(s, 0)
	var args []any
	var err error
	switch {
	case len(bytes.TrimSpace(s)) == 0 || hasLit(s, i, "null") && jsonscan.SkipSpace(s, i+4) == len(s):
		if args, _, err = d.record(params, -1, nil, 0); err != nil {
			return nil, &ArgumentError{Msg: err.Error()}
		}
	case s[i] != '{':
		err = errNotObject
	default:
		var end int
		if args, end, err = d.record(params, i, nil, 0); err == nil && jsonscan.SkipSpace(s, end) != len(s) {
			err = jsonscan.ErrSyntax
		}
	}
	if err != nil {
		if !jsonscan.Valid(s) {
			err = jsonscan.ErrSyntax
		}
		return nil, &ArgumentError{Msg: err.Error()}
	}
	return args, nil
}

var errNotObject = errors.New("arguments are not an object")

// argDecoder reads JSON into WIT values.
type argDecoder struct{ s []byte }

// argPath is where a value stands in the arguments, for messages: built as
// the decoder descends, written out only for an error.
type argPath struct {
	up    *argPath
	name  string // a field's or a case's name; "" for an element
	index int
}

func (p *argPath) String() string {
	if p == nil {
		return ""
	}
	up := p.up.String()
	switch {
	case p.name == "":
		return up + "[" + strconv.Itoa(p.index) + "]"
	case up == "":
		return p.name
	}
	return up + "." + p.name
}

// kindAt names the JSON type of the value at s[i] as jsonscan.Kind names
// a decoded one.
func kindAt(s []byte, i int) string {
	if i < len(s) {
		switch s[i] {
		case 'n':
			return "null"
		case 't', 'f':
			return "a boolean"
		case '"':
			return "a string"
		case '[':
			return "an array"
		case '{':
			return "an object"
		}
	}
	return "a number"
}

// hasLit reports whether s[i:] begins with lit.
func hasLit(s []byte, i int, lit string) bool {
	return len(s)-i >= len(lit) && string(s[i:i+len(lit)]) == lit
}

// value reads the value of type t at s[i] (no space before it) and
// returns it and its end.
func (d *argDecoder) value(t *Type, i int, at *argPath, depth int) (any, int, error) {
	s := d.s
	if i >= len(s) {
		return nil, i, jsonscan.ErrSyntax
	}
	bad := func(want string) (any, int, error) {
		return nil, i, fmt.Errorf("%s: want %s, got %s", at.String(), want, kindAt(s, i))
	}
	switch t.Kind {
	case Bool:
		switch {
		case hasLit(s, i, "true"):
			return true, i + 4, nil
		case hasLit(s, i, "false"):
			return false, i + 5, nil
		}
		return bad("a boolean")
	case S8, S16, S32, S64:
		n, end, ok := d.number(i, depth)
		if !ok {
			return bad("an integer")
		}
		x, err := strconv.ParseInt(n, 10, 64)
		lo, hi := intRange(t.Kind)
		if err != nil || x < lo || x > hi {
			return nil, i, fmt.Errorf("%s: %s is not an integer from %d to %d", at.String(), n, lo, hi)
		}
		return x, end, nil
	case U8, U16, U32, U64:
		n, end, ok := d.number(i, depth)
		if !ok {
			return bad("an integer")
		}
		x, err := strconv.ParseUint(n, 10, 64)
		if hi := uintMax(t.Kind); err != nil || x > hi {
			return nil, i, fmt.Errorf("%s: %s is not an integer from 0 to %d", at.String(), n, hi)
		}
		return x, end, nil
	case F32, F64:
		n, end, ok := d.number(i, depth)
		if !ok {
			return bad("a number")
		}
		x, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return nil, i, fmt.Errorf("%s: %s is not a number", at.String(), n)
		}
		if t.Kind == F32 {
			return float32(x), end, nil
		}
		return x, end, nil
	case Char:
		str, end, ok := d.str(i)
		if !ok || utf8.RuneCountInString(str) != 1 {
			return bad("a string of one character")
		}
		r, _ := utf8.DecodeRuneInString(str)
		return r, end, nil
	case String:
		str, end, ok := d.str(i)
		if !ok {
			return bad("a string")
		}
		return str, end, nil
	case List:
		if s[i] != '[' {
			return bad("an array")
		}
		return d.list(t.Elem, i, at, depth)
	case Tuple:
		if s[i] != '[' {
			return bad(fmt.Sprintf("an array of %d items", len(t.Fields)))
		}
		return d.tuple(t, i, at, depth)
	case Record:
		if s[i] != '{' {
			return bad("an object")
		}
		return d.record(t.Fields, i, at, depth)
	case Option:
		if hasLit(s, i, "null") {
			return Case{Index: 0}, i + 4, nil
		}
		e, end, err := d.value(t.Elem, i, at, depth)
		if err != nil {
			return nil, end, err
		}
		return Case{Index: 1, Val: e}, end, nil
	case Enum:
		str, end, ok := d.str(i)
		if !ok {
			return bad("a string")
		}
		for k, n := range t.Names {
			if n == str {
				return Case{Index: uint32(k)}, end, nil
			}
		}
		return nil, i, fmt.Errorf("%s: %q is not one of %q", at.String(), str, t.Names)
	case Flags:
		if s[i] != '[' {
			return bad("an array of strings")
		}
		return d.flags(t, i, at, depth)
	case Variant, Result:
		if s[i] != '{' {
			return bad("an object with one member, the case")
		}
		return d.variant(t, i, at, depth)
	case Own, Borrow:
		return nil, i, fmt.Errorf("%s: resource handles cannot be given as JSON", at.String())
	}
	return nil, i, fmt.Errorf("%s: unknown type %s", at.String(), t)
}

// number returns the literal of the number at s[i], and its end.
func (d *argDecoder) number(i, depth int) (string, int, bool) {
	if i >= len(d.s) || d.s[i] != '-' && (d.s[i] < '0' || d.s[i] > '9') {
		return "", i, false
	}
	end, err := jsonscan.ScanValue(d.s, i, depth)
	if err != nil {
		return "", i, false
	}
	return string(d.s[i:end]), end, true
}

// str returns the string at s[i], unquoted, and its end.
func (d *argDecoder) str(i int) (string, int, bool) {
	if i >= len(d.s) || d.s[i] != '"' {
		return "", i, false
	}
	info, err := jsonscan.ScanString(d.s, i)
	if err != nil {
		return "", i, false
	}
	return jsonscan.Unquote(d.s[info.Start:info.End], info), info.End, true
}

// skip returns the end of the value at s[i], one not to be read.
func (d *argDecoder) skip(i, depth int) (int, error) { return jsonscan.ScanValue(d.s, i, depth) }

// list reads a list of elem; a list<u8> is a []byte.
func (d *argDecoder) list(elem *Type, i int, at *argPath, depth int) (any, int, error) {
	raw, out := []byte{}, []any{}
	n := 0
	end, err := jsonscan.Scanner{}.Array(d.s, i, func(v0 int) (int, error) {
		e, end, err := d.value(elem, v0, &argPath{up: at, index: n}, depth+1)
		if err != nil {
			return end, err
		}
		n++
		if elem.Kind == U8 {
			raw = append(raw, byte(e.(uint64)))
		} else {
			out = append(out, e)
		}
		return end, nil
	})
	switch {
	case err != nil:
		return nil, end, err
	case elem.Kind == U8:
		return raw, end, nil
	}
	return out, end, nil
}

// tuple reads an array of exactly the tuple's members; another count is
// refused before any member's own fault.
func (d *argDecoder) tuple(t *Type, i int, at *argPath, depth int) (any, int, error) {
	out := make([]any, len(t.Fields))
	n := 0
	var first error
	end, err := jsonscan.Scanner{}.Array(d.s, i, func(v0 int) (int, error) {
		k := n
		n++
		if k >= len(out) || first != nil {
			return d.skip(v0, depth+1)
		}
		e, end, err := d.value(t.Fields[k].Type, v0, &argPath{up: at, index: k}, depth+1)
		if err != nil {
			first = err
			return d.skip(v0, depth+1)
		}
		out[k] = e
		return end, nil
	})
	switch {
	case err != nil:
		return nil, end, err
	case n != len(out):
		return nil, i, fmt.Errorf("%s: want an array of %d items, got an array", at.String(), len(out))
	case first != nil:
		return nil, i, first
	}
	return out, end, nil
}

// record reads the object at s[i] (with i < 0: an object without
// members), which must have every one of fields and no other member,
// into values in field order. A member given twice counts as its last
// value. The faults are told as a decoded object's would be: a missing
// field, else the first field (in field order) whose value does not fit,
// else an unknown member.
func (d *argDecoder) record(fields []Field, i int, at *argPath, depth int) ([]any, int, error) {
	s := d.s
	out := make([]any, len(fields))
	var seenBuf [4]uint64
	seen := seenBuf[:]
	if len(fields) > 64*len(seenBuf) {
		seen = make([]uint64, (len(fields)+63)/64)
	}
	var errs []error // by field, of its last value, once one does not fit
	unknown, hasUnknown := "", false
	end := i
	if i >= 0 {
		var err error
		end, err = jsonscan.Scanner{}.Object(s, i, func(k jsonscan.String, v0 int) (int, error) {
			f := fieldIndex(fields, s, k)
			if f < 0 {
				if !hasUnknown {
					unknown, hasUnknown = jsonscan.Unquote(s[k.Start:k.End], k), true
				}
				return d.skip(v0, depth+1)
			}
			seen[f/64] |= 1 << (f % 64)
			v, end, err := d.value(fields[f].Type, v0, &argPath{up: at, name: fields[f].Name}, depth+1)
			if err != nil {
				if errs == nil {
					errs = make([]error, len(fields))
				}
				errs[f], out[f] = err, nil
				return d.skip(v0, depth+1)
			}
			if errs != nil {
				errs[f] = nil
			}
			out[f] = v
			return end, nil
		})
		if err != nil {
			return nil, end, err
		}
	}
	for f, field := range fields {
		if seen[f/64]&(1<<(f%64)) == 0 {
			return nil, end, fmt.Errorf("%s: missing %q", at.String(), field.Name)
		}
		if errs != nil && errs[f] != nil {
			return nil, end, errs[f]
		}
	}
	if hasUnknown {
		return nil, end, fmt.Errorf("%s: unknown member %q", at.String(), unknown)
	}
	return out, end, nil
}

// fieldIndex is the index of the field the key k of s names, or -1.
func fieldIndex(fields []Field, s []byte, k jsonscan.String) int {
	key := ""
	if k.Escaped {
		key = jsonscan.Unquote(s[k.Start:k.End], k)
	}
	for f := range fields {
		if k.Escaped && fields[f].Name == key || !k.Escaped && string(s[k.Start+1:k.End-1]) == fields[f].Name {
			return f
		}
	}
	return -1
}

// flags reads an array of the flags' labels.
func (d *argDecoder) flags(t *Type, i int, at *argPath, depth int) (any, int, error) {
	var bits uint32
	end, err := jsonscan.Scanner{}.Array(d.s, i, func(v0 int) (int, error) {
		str, end, ok := d.str(v0)
		if ok {
			for k, n := range t.Names {
				if n == str {
					bits |= 1 << k
					return end, nil
				}
			}
			return v0, fmt.Errorf("%s: %v is not one of %q", at.String(), str, t.Names)
		}
		// Not a string: named as its decoded value prints.
		e, err := d.skip(v0, depth+1)
		if err != nil {
			return e, err
		}
		v, err := jsonscan.Decode(d.s[v0:e])
		if err != nil {
			return e, err
		}
		return v0, fmt.Errorf("%s: %v is not one of %q", at.String(), v, t.Names)
	})
	if err != nil {
		return nil, end, err
	}
	return bits, end, nil
}

// variant reads an object of one member, the case, with its payload
// (null for a case without one).
func (d *argDecoder) variant(t *Type, i int, at *argPath, depth int) (any, int, error) {
	s := d.s
	var key string
	members, many := 0, false
	var val any
	var verr error
	end, err := jsonscan.Scanner{}.Object(s, i, func(k jsonscan.String, v0 int) (int, error) {
		name := jsonscan.Unquote(s[k.Start:k.End], k)
		members++
		many = many || members > 1 && name != key
		key = name
		if many {
			return d.skip(v0, depth+1)
		}
		c, payload := caseOf(t, name)
		switch {
		case c < 0:
			val, verr = nil, fmt.Errorf("%s: %q is not one of %q", at.String(), name, caseNames(t))
		case payload == nil && !hasLit(s, v0, "null"):
			val, verr = nil, fmt.Errorf("%s.%s: case without payload: want null", at.String(), name)
		case payload == nil:
			val, verr = Case{Index: uint32(c)}, nil
			return v0 + 4, nil
		default:
			e, end, err := d.value(payload, v0, &argPath{up: at, name: name}, depth+1)
			if err == nil {
				val, verr = Case{Index: uint32(c), Val: e}, nil
				return end, nil
			}
			val, verr = nil, err
		}
		return d.skip(v0, depth+1)
	})
	switch {
	case err != nil:
		return nil, end, err
	case members == 0 || many:
		return nil, i, fmt.Errorf("%s: want an object with one member, the case, got an object", at.String())
	case verr != nil:
		return nil, i, verr
	}
	return val, end, nil
}

// caseOf returns the index of t's case name and its payload type, or -1.
func caseOf(t *Type, name string) (int, *Type) {
	if t.Kind == Result {
		switch name {
		case "ok":
			return 0, t.Ok
		case "err":
			return 1, t.Err
		}
		return -1, nil
	}
	for n, f := range t.Fields {
		if f.Name == name {
			return n, f.Type
		}
	}
	return -1, nil
}
