package component

import (
	"fmt"
	"strings"
)

// Kind is the kind of a WIT value type.
type Kind uint8

// The value type kinds of the Component Model.
const (
	Bool Kind = iota + 1
	S8
	U8
	S16
	U16
	S32
	U32
	S64
	U64
	F32
	F64
	Char
	String
	List
	Record
	Tuple
	Variant
	Enum
	Option
	Result
	Flags
	Own
	Borrow
)

var kindNames = [...]string{Bool: "bool", S8: "s8", U8: "u8", S16: "s16", U16: "u16", S32: "s32", U32: "u32",
	S64: "s64", U64: "u64", F32: "f32", F64: "f64", Char: "char", String: "string", List: "list", Record: "record",
	Tuple: "tuple", Variant: "variant", Enum: "enum", Option: "option", Result: "result", Flags: "flags",
	Own: "own", Borrow: "borrow"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Type is a value type. Types are shared by pointer: an alias or an
// equality-bound export refers to the same *Type.
type Type struct {
	Kind Kind
	// Elem is the element of a list and the payload of an option.
	Elem *Type
	// Fields are a record's fields and a tuple's members (Name "") and a
	// variant's cases (Type nil for a case without payload).
	Fields []Field
	// Names are an enum's cases and a flags' labels.
	Names []string
	// Ok and Err are a result's payloads (nil when absent).
	Ok, Err *Type
	// Resource is what own and borrow refer to.
	Resource *Resource

	layout *layout // memoised size, alignment and flattening
}

// Field is a named member of a record, a case of a variant or a parameter.
type Field struct {
	Name string
	Type *Type
}

// Resource is a resource type: imported (Interface names its instance) or
// defined by the component itself.
type Resource struct {
	Name      string
	Interface string // import name of the instance that exports it; "" for the component's own
	// dtor is the core function a component-defined resource's handles
	// are destroyed with; nil when it has none.
	dtor *coreRef
	// local says the component defines it: only then do resource.new
	// and resource.rep apply.
	local bool
}

// FuncType is a component function's type.
type FuncType struct {
	Params []Field
	Result *Type // nil when it returns nothing
}

// instanceType is the type of an imported instance: what it exports.
type instanceType struct {
	exports map[string]any // *FuncType, *Type, *Resource
}

// componentType is a component type, kept only to name it when refused.
type componentType struct{}

var prims = map[byte]*Type{}

func init() {
	for code, k := range map[byte]Kind{0x7f: Bool, 0x7e: S8, 0x7d: U8, 0x7c: S16, 0x7b: U16, 0x7a: S32, 0x79: U32,
		0x78: S64, 0x77: U64, 0x76: F32, 0x75: F64, 0x74: Char, 0x73: String} {
		t := &Type{Kind: k}
		t.layout = computeLayout(t)
		prims[code] = t
	}
}

// String writes t in WIT syntax, cut short after about 200 bytes (types
// are a DAG, whose written-out form can be huge).
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

const maxTypeString = 200

func (t *Type) write(b *strings.Builder) {
	if b.Len() > maxTypeString {
		if !strings.HasSuffix(b.String(), "…") {
			b.WriteString("…")
		}
		return
	}
	switch t.Kind {
	case List, Option:
		b.WriteString(t.Kind.String() + "<")
		t.Elem.write(b)
		b.WriteString(">")
	case Result:
		// As WIT writes it: result, result<T>, result<_, E>, result<T, E>.
		b.WriteString("result")
		if t.Ok == nil && t.Err == nil {
			break
		}
		b.WriteString("<")
		if t.Ok == nil {
			b.WriteString("_")
		} else {
			t.Ok.write(b)
		}
		if t.Err != nil {
			b.WriteString(", ")
			t.Err.write(b)
		}
		b.WriteString(">")
	case Tuple:
		b.WriteString("tuple<")
		for i, f := range t.Fields {
			if b.Len() > maxTypeString {
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			f.Type.write(b)
		}
		b.WriteString(">")
	case Record, Variant:
		b.WriteString(t.Kind.String() + " { ")
		for i, f := range t.Fields {
			if b.Len() > maxTypeString {
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name)
			switch {
			case f.Type == nil:
			case t.Kind == Variant: // a case's payload, as WIT writes it
				b.WriteString("(")
				f.Type.write(b)
				b.WriteString(")")
			default:
				b.WriteString(": ")
				f.Type.write(b)
			}
		}
		b.WriteString(" }")
	case Enum, Flags:
		b.WriteString(t.Kind.String() + " { " + strings.Join(t.Names, ", ") + " }")
	case Own, Borrow:
		b.WriteString(t.Kind.String() + "<" + t.Resource.Name + ">")
	default:
		b.WriteString(t.Kind.String())
	}
}

// hasResource reports whether t holds a handle anywhere.
func (t *Type) hasResource() bool { return t != nil && t.layout.res }
