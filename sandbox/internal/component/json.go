package component

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

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
// JSON form (the inverse of argsFromJSON). Non-finite floats become null.
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
