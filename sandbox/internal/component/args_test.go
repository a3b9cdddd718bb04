package component

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// argTypes are parameters of every kind a tool's arguments can take.
func argTypes() []Field {
	u8, s16, u32, s64, u64 := &Type{Kind: U8}, &Type{Kind: S16}, &Type{Kind: U32}, &Type{Kind: S64}, &Type{Kind: U64}
	str, f32, f64, ch, b := &Type{Kind: String}, &Type{Kind: F32}, &Type{Kind: F64}, &Type{Kind: Char}, &Type{Kind: Bool}
	point := &Type{Kind: Record, Fields: []Field{{"x", s16}, {"y", s16}, {"label", str}}}
	return []Field{
		{"b", b}, {"n", u8}, {"i", s64}, {"u", u64}, {"w", u32}, {"f", f32}, {"g", f64}, {"c", ch}, {"s", str},
		{"bytes", &Type{Kind: List, Elem: u8}},
		{"points", &Type{Kind: List, Elem: point}},
		{"pair", &Type{Kind: Tuple, Fields: []Field{{"", str}, {"", &Type{Kind: Option, Elem: u32}}}}},
		{"o", &Type{Kind: Option, Elem: &Type{Kind: Option, Elem: str}}},
		{"color", &Type{Kind: Enum, Names: []string{"red", "green", "blue"}}},
		{"perm", &Type{Kind: Flags, Names: []string{"read", "write", "exec"}}},
		{"shape", &Type{Kind: Variant, Fields: []Field{{"circle", f64}, {"rect", point}, {"empty", nil}}}},
		{"r", &Type{Kind: Result, Ok: str, Err: nil}},
		{"h", &Type{Kind: Own, Resource: &Resource{Name: "file"}}},
	}
}

// argSeeds are arguments for argTypes: fitting, and wrong in every way
// the messages tell apart.
var argSeeds = []string{
	`{"b":true,"n":255,"i":-9223372036854775808,"u":18446744073709551615,"w":0,"f":1.5,"g":-2e300,"c":"ÿ","s":"a\"b\u00e9",` +
		`"bytes":[0,1,255],"points":[{"x":1,"y":-2,"label":"p"}],"pair":["x",null],"o":null,"color":"blue",` +
		`"perm":["read","exec"],"shape":{"rect":{"x":3,"y":4,"label":""}},"r":{"err":null},"h":1}`,
	`{"b":1}`, `{"n":256}`, `{"n":-1}`, `{"n":1.5}`, `{"n":"1"}`, `{"i":9223372036854775808}`, `{"c":"ab"}`, `{"c":3}`,
	`{"bytes":[1,"x"]}`, `{"points":[{"x":1}]}`, `{"points":[{"x":1,"y":2,"label":"a","z":0}]}`, `{"pair":["x"]}`,
	`{"pair":["x",1,2]}`, `{"pair":[1,"x"]}`, `{"color":"pink"}`, `{"perm":["read",3]}`, `{"perm":["nope"]}`, `{"perm":[{"a":[1]}]}`,
	`{"shape":{}}`, `{"shape":{"circle":1,"rect":null}}`, `{"shape":{"square":1}}`, `{"shape":{"empty":0}}`,
	`{"shape":{"circle":"x"}}`, `{"shape":{"circle":1,"circle":2}}`, `{"r":{"ok":1}}`, `{"r":{"oops":1}}`,
	`{"s":"x","s":1}`, `{"s":1,"s":"x"}`, `{"zz":1}`, `{}`, `null`, ``, ` `, `[]`, `"x"`, `{bad`, `{"b":tru}`, `{"b":true}x`,
	`{"b":true,"n":1,"i":1,"u":1,"w":1,"f":1,"g":1,"c":"x","s":"","bytes":[],"points":[],"pair":["",5],"o":"x","color":"red",` +
		`"perm":[],"shape":{"empty":null},"r":{"ok":"k"},"h":null}`,
	`{"b":true,"n":1,"i":1,"u":1,"w":1,"f":1e999,"g":1,"c":"x","s":"","bytes":[],"points":[],"pair":["",5],"o":"x","color":"red",` +
		`"perm":[],"shape":{"empty":null},"r":{"ok":"k"},"h":null}`,
}

// TestArgsFromJSON checks argsFromJSON against the tree conversion it
// replaced, value for value and message for message.
func TestArgsFromJSON(t *testing.T) {
	params := argTypes()
	for _, in := range argSeeds {
		checkArgs(t, params, []byte(in))
		checkArgs(t, params[:9], []byte(in))
	}
}

func FuzzArgsFromJSON(f *testing.F) {
	for _, s := range argSeeds {
		f.Add([]byte(s))
	}
	params := argTypes()
	f.Fuzz(func(t *testing.T, in []byte) {
		checkArgs(t, params, in)
		checkArgs(t, params[9:17], in)
	})
}

func checkArgs(t *testing.T, params []Field, in []byte) {
	t.Helper()
	got, err := argsFromJSON(params, in)
	want, werr := treeArgs(params, in)
	switch {
	case (err == nil) != (werr == nil):
		t.Fatalf("%q: got %v, %v; want %v, %v", in, got, err, want, werr)
	case err != nil && err.Error() != werr.Error() &&
		!(strings.Contains(err.Error(), "unknown member") && strings.Contains(werr.Error(), "unknown member")):
		t.Fatalf("%q: error %q; want %q", in, err, werr)
	case err == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q: got %#v; want %#v", in, got, want)
	}
}

// treeArgs is what the arguments became before argsFromJSON: one
// decoded tree, then treeFromJSON.
func treeArgs(params []Field, arguments []byte) ([]any, error) {
	var v any
	if len(strings.TrimSpace(string(arguments))) > 0 {
		var err error
		if v, err = jsonscan.Decode(arguments); err != nil {
			return nil, &ArgumentError{Msg: err.Error()}
		}
	}
	m := map[string]any{}
	if v != nil {
		var ok bool
		if m, ok = v.(map[string]any); !ok {
			return nil, &ArgumentError{Msg: "arguments are not an object"}
		}
	}
	args, err := treeFields(params, m, "")
	if err != nil {
		return nil, &ArgumentError{Msg: err.Error()}
	}
	return args, nil
}

// treeFromJSON is the conversion argsFromJSON replaced, kept as its
// oracle: v, decoded by jsonscan.Decode, to a value of type t.
func treeFromJSON(t *Type, v any, at string) (any, error) {
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
				e, err := treeFromJSON(t.Elem, x, at+"["+strconv.Itoa(i)+"]")
				if err != nil {
					return nil, err
				}
				b[i] = byte(e.(uint64))
			}
			return b, nil
		}
		out := make([]any, len(a))
		for i, x := range a {
			e, err := treeFromJSON(t.Elem, x, at+"["+strconv.Itoa(i)+"]")
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
			e, err := treeFromJSON(f.Type, a[i], at+"["+strconv.Itoa(i)+"]")
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
		return treeFields(t.Fields, m, at)
	case Option:
		if v == nil {
			return Case{Index: 0}, nil
		}
		e, err := treeFromJSON(t.Elem, v, at)
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
				e, err := treeFromJSON(cases[i], x, at+"."+k)
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
func treeFields(fields []Field, m map[string]any, at string) ([]any, error) {
	out := make([]any, len(fields))
	for i, f := range fields {
		x, ok := m[f.Name]
		if !ok {
			return nil, fmt.Errorf("%s: missing %q", at, f.Name)
		}
		e, err := treeFromJSON(f.Type, x, treeJoin(at, f.Name))
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

func treeJoin(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
