package component

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// FromJSON converts v (decoded by encoding/json with UseNumber) to a value
// of type t. at names the place for errors ("p.label").
func FromJSON(t *Type, v any, at string) (any, error) {
	bad := func(want string) (any, error) {
		return nil, fmt.Errorf("%s: want %s, got %s", at, want, jsonscan.Kind(v))
	}
	switch t.Kind {
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return bad("a boolean")
		}
		return b, nil
	case S8, S16, S32, S64:
		n, ok := v.(json.Number)
		if !ok {
			return bad("an integer")
		}
		x, err := strconv.ParseInt(string(n), 10, 64)
		lo, hi := intRange(t.Kind)
		if err != nil || x < lo || x > hi {
			return nil, fmt.Errorf("%s: %s is not an integer from %d to %d", at, n, lo, hi)
		}
		return x, nil
	case U8, U16, U32, U64:
		n, ok := v.(json.Number)
		if !ok {
			return bad("an integer")
		}
		x, err := strconv.ParseUint(string(n), 10, 64)
		hi := uintMax(t.Kind)
		if err != nil || x > hi {
			return nil, fmt.Errorf("%s: %s is not an integer from 0 to %d", at, n, hi)
		}
		return x, nil
	case F32, F64:
		n, ok := v.(json.Number)
		if !ok {
			return bad("a number")
		}
		x, err := n.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not a number", at, n)
		}
		if t.Kind == F32 {
			return float32(x), nil
		}
		return x, nil
	case Char:
		s, ok := v.(string)
		if !ok || utf8.RuneCountInString(s) != 1 {
			return bad("a string of one character")
		}
		r, _ := utf8.DecodeRuneInString(s)
		return r, nil
	case String:
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		return s, nil
	case List:
		a, ok := v.([]any)
		if !ok {
			return bad("an array")
		}
		if t.Elem.Kind == U8 {
			b := make([]byte, len(a))
			for i, x := range a {
				e, err := FromJSON(t.Elem, x, at+"["+strconv.Itoa(i)+"]")
				if err != nil {
					return nil, err
				}
				b[i] = byte(e.(uint64))
			}
			return b, nil
		}
		out := make([]any, len(a))
		for i, x := range a {
			e, err := FromJSON(t.Elem, x, at+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case Tuple:
		a, ok := v.([]any)
		if !ok || len(a) != len(t.Fields) {
			return bad(fmt.Sprintf("an array of %d items", len(t.Fields)))
		}
		out := make([]any, len(a))
		for i, f := range t.Fields {
			e, err := FromJSON(f.Type, a[i], at+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case Record:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		return fieldsFromJSON(t.Fields, m, at)
	case Option:
		if v == nil {
			return Case{Index: 0}, nil
		}
		e, err := FromJSON(t.Elem, v, at)
		if err != nil {
			return nil, err
		}
		return Case{Index: 1, Val: e}, nil
	case Enum:
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		for i, n := range t.Names {
			if n == s {
				return Case{Index: uint32(i)}, nil
			}
		}
		return nil, fmt.Errorf("%s: %q is not one of %q", at, s, t.Names)
	case Flags:
		a, ok := v.([]any)
		if !ok {
			return bad("an array of strings")
		}
		var bits uint32
	flags:
		for _, x := range a {
			s, _ := x.(string)
			for i, n := range t.Names {
				if n == s {
					bits |= 1 << i
					continue flags
				}
			}
			return nil, fmt.Errorf("%s: %v is not one of %q", at, x, t.Names)
		}
		return bits, nil
	case Variant, Result:
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return bad("an object with one member, the case")
		}
		names, cases := caseNames(t), t.cases()
		for k, x := range m {
			for i, n := range names {
				if n != k {
					continue
				}
				if cases[i] == nil {
					if x != nil {
						return nil, fmt.Errorf("%s.%s: case without payload: want null", at, k)
					}
					return Case{Index: uint32(i)}, nil
				}
				e, err := FromJSON(cases[i], x, at+"."+k)
				if err != nil {
					return nil, err
				}
				return Case{Index: uint32(i), Val: e}, nil
			}
			return nil, fmt.Errorf("%s: %q is not one of %q", at, k, names)
		}
	case Own, Borrow:
		return nil, fmt.Errorf("%s: resource handles cannot be given as JSON", at)
	}
	return nil, fmt.Errorf("%s: unknown type %s", at, t)
}

// fieldsFromJSON converts an object with every field of fields (and no
// other member) to values in field order.
func fieldsFromJSON(fields []Field, m map[string]any, at string) ([]any, error) {
	out := make([]any, len(fields))
	for i, f := range fields {
		x, ok := m[f.Name]
		if !ok {
			return nil, fmt.Errorf("%s: missing %q", at, f.Name)
		}
		e, err := FromJSON(f.Type, x, joinPath(at, f.Name))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	if len(m) > len(fields) {
		for k := range m {
			known := false
			for _, f := range fields {
				known = known || f.Name == k
			}
			if !known {
				return nil, fmt.Errorf("%s: unknown member %q", at, k)
			}
		}
	}
	return out, nil
}

func joinPath(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func caseNames(t *Type) []string {
	if t.Kind == Result {
		return []string{"ok", "err"}
	}
	names := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		names[i] = f.Name
	}
	return names
}

func intRange(k Kind) (int64, int64) {
	switch k {
	case S8:
		return math.MinInt8, math.MaxInt8
	case S16:
		return math.MinInt16, math.MaxInt16
	case S32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func uintMax(k Kind) uint64 {
	switch k {
	case U8:
		return math.MaxUint8
	case U16:
		return math.MaxUint16
	case U32:
		return math.MaxUint32
	}
	return math.MaxUint64
}

// ToJSON converts a value of type t to what encoding/json writes as its
// JSON form (the inverse of FromJSON). Non-finite floats become null.
func ToJSON(t *Type, v any) any {
	switch t.Kind {
	case F32:
		f := float64(v.(float32))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 32))
	case F64:
		f := v.(float64)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case Char:
		return string(v.(rune))
	case List:
		if b, ok := v.([]byte); ok {
			out := make([]any, len(b))
			for i, x := range b {
				out[i] = int(x)
			}
			return out
		}
		a := v.([]any)
		out := make([]any, len(a))
		for i, x := range a {
			out[i] = ToJSON(t.Elem, x)
		}
		return out
	case Tuple:
		a := v.([]any)
		out := make([]any, len(a))
		for i, f := range t.Fields {
			out[i] = ToJSON(f.Type, a[i])
		}
		return out
	case Record:
		a := v.([]any)
		out := make(map[string]any, len(a))
		for i, f := range t.Fields {
			out[f.Name] = ToJSON(f.Type, a[i])
		}
		return out
	case Option:
		c := v.(Case)
		if c.Index == 0 {
			return nil
		}
		return ToJSON(t.Elem, c.Val)
	case Enum:
		return t.Names[v.(Case).Index]
	case Flags:
		bits := v.(uint32)
		out := []any{}
		for i, n := range t.Names {
			if bits&(1<<i) != 0 {
				out = append(out, n)
			}
		}
		return out
	case Variant, Result:
		c := v.(Case)
		p := t.cases()[c.Index]
		var x any
		if p != nil {
			x = ToJSON(p, c.Val)
		}
		return map[string]any{caseNames(t)[c.Index]: x}
	case Own, Borrow:
		return fmt.Sprintf("<%s handle>", t.Resource.Name)
	}
	return v
}

// Schema returns the JSON Schema of t.
func Schema(t *Type) map[string]any {
	switch t.Kind {
	case Bool:
		return map[string]any{"type": "boolean"}
	case S8, S16, S32, S64:
		lo, hi := intRange(t.Kind)
		return map[string]any{"type": "integer", "minimum": lo, "maximum": hi}
	case U8, U16, U32, U64:
		return map[string]any{"type": "integer", "minimum": 0, "maximum": uintMax(t.Kind)}
	case F32, F64:
		return map[string]any{"type": "number"}
	case Char:
		return map[string]any{"type": "string", "minLength": 1, "maxLength": 1}
	case String:
		return map[string]any{"type": "string"}
	case List:
		return map[string]any{"type": "array", "items": Schema(t.Elem)}
	case Tuple:
		items := make([]any, len(t.Fields))
		for i, f := range t.Fields {
			items[i] = Schema(f.Type)
		}
		return map[string]any{"type": "array", "prefixItems": items, "items": false,
			"minItems": len(items), "maxItems": len(items)}
	case Record:
		return objectSchema(t.Fields)
	case Option:
		return map[string]any{"anyOf": []any{Schema(t.Elem), map[string]any{"type": "null"}}}
	case Enum:
		return map[string]any{"type": "string", "enum": t.Names}
	case Flags:
		return map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": t.Names}, "uniqueItems": true}
	case Variant, Result:
		names, cases := caseNames(t), t.cases()
		one := make([]any, len(names))
		for i, n := range names {
			var p map[string]any
			if cases[i] == nil {
				p = map[string]any{"type": "null"}
			} else {
				p = Schema(cases[i])
			}
			one[i] = map[string]any{"type": "object", "properties": map[string]any{n: p},
				"required": []string{n}, "additionalProperties": false}
		}
		return map[string]any{"oneOf": one}
	}
	return map[string]any{}
}

// objectSchema is the schema of an object with fields, all required (an
// option field is given as null when absent).
func objectSchema(fields []Field) map[string]any {
	props := make(map[string]any, len(fields))
	req := []string{}
	for _, f := range fields {
		props[f.Name] = Schema(f.Type)
		req = append(req, f.Name)
	}
	return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}
