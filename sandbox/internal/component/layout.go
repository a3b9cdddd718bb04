package component

import "github.com/tetratelabs/wazero/api"

// layout is a type's size and alignment in linear memory and its
// flattening into core values (the canonical ABI).
type layout struct {
	size, align uint32
	flat        []api.ValueType
	// nodes is the size of the type written out as a tree (as its JSON
	// Schema is), saturating at maxNodes: types are a DAG, and a hostile
	// one can double at every level.
	nodes int
	// schema bounds the bytes of the type's JSON Schema (Schema, as
	// encoding/json writes it) from above, saturating at maxSchema: the
	// tools' schemas are weighed before any is built.
	schema int64
	// res says a handle is somewhere inside.
	res bool
}

// maxSchema is where schema estimates saturate (far above any budget).
const maxSchema = 1 << 50

// maxNodes bounds the schema of one type; a function with a larger one is
// not a tool.
const maxNodes = 1 << 16

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
	f32 = api.ValueTypeF32
	f64 = api.ValueTypeF64
)

func alignTo(n, a uint32) uint32 { return (n + a - 1) / a * a }

func computeLayout(t *Type) *layout {
	l := computeLayout1(t)
	l.nodes = 1
	l.res = t.Kind == Own || t.Kind == Borrow
	l.schema = schemaNodeBytes(t)
	add := func(c *Type) {
		if c != nil {
			l.nodes = min(l.nodes+c.layout.nodes, maxNodes)
			l.schema = min(l.schema+c.layout.schema, maxSchema)
			l.res = l.res || c.layout.res
		}
	}
	add(t.Elem)
	add(t.Ok)
	add(t.Err)
	for _, f := range t.Fields {
		add(f.Type)
	}
	return l
}

func computeLayout1(t *Type) *layout {
	switch t.Kind {
	case Bool, S8, U8:
		return &layout{size: 1, align: 1, flat: []api.ValueType{i32}}
	case S16, U16:
		return &layout{size: 2, align: 2, flat: []api.ValueType{i32}}
	case S32, U32, Char, Own, Borrow:
		return &layout{size: 4, align: 4, flat: []api.ValueType{i32}}
	case S64, U64:
		return &layout{size: 8, align: 8, flat: []api.ValueType{i64}}
	case F32:
		return &layout{size: 4, align: 4, flat: []api.ValueType{f32}}
	case F64:
		return &layout{size: 8, align: 8, flat: []api.ValueType{f64}}
	case String, List:
		return &layout{size: 8, align: 4, flat: []api.ValueType{i32, i32}}
	case Record, Tuple:
		l := &layout{align: 1}
		for _, f := range t.Fields {
			fl := f.Type.layout
			l.size = alignTo(l.size, fl.align) + fl.size
			l.align = max(l.align, fl.align)
			l.flat = capFlat(append(l.flat, fl.flat...))
		}
		l.size = alignTo(l.size, l.align)
		return l
	case Flags:
		n := uint32(len(t.Names))
		switch {
		case n == 0:
			return &layout{size: 0, align: 1, flat: nil}
		case n <= 8:
			return &layout{size: 1, align: 1, flat: []api.ValueType{i32}}
		case n <= 16:
			return &layout{size: 2, align: 2, flat: []api.ValueType{i32}}
		}
		return &layout{size: 4, align: 4, flat: []api.ValueType{i32}}
	}
	cases := t.cases()
	disc := discSize(len(cases))
	l := &layout{align: disc}
	var maxSize uint32
	var flat []api.ValueType
	for _, c := range cases {
		if c == nil {
			continue
		}
		cl := c.layout
		l.align = max(l.align, cl.align)
		maxSize = max(maxSize, cl.size)
		for i, ft := range cl.flat {
			if i < len(flat) {
				flat[i] = join(flat[i], ft)
			} else {
				flat = append(flat, ft)
			}
		}
	}
	l.size = alignTo(alignTo(disc, l.align)+maxSize, l.align)
	l.flat = capFlat(append([]api.ValueType{i32}, flat...))
	return l
}

// capFlat keeps at most maxFlatParams+1 flat values: a longer flattening
// only ever means "spill to memory", and a DAG of records would otherwise
// flatten to exponentially many.
func capFlat(f []api.ValueType) []api.ValueType {
	if len(f) > maxFlatParams+1 {
		return f[: maxFlatParams+1 : maxFlatParams+1]
	}
	return f
}

// cases returns the payload types of a variant-like type, by case.
func (t *Type) cases() []*Type {
	switch t.Kind {
	case Option:
		return []*Type{nil, t.Elem}
	case Result:
		return []*Type{t.Ok, t.Err}
	case Enum:
		return make([]*Type, len(t.Names))
	}
	out := make([]*Type, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = f.Type
	}
	return out
}

func discSize(n int) uint32 {
	switch {
	case n <= 1<<8:
		return 1
	case n <= 1<<16:
		return 2
	}
	return 4
}

func join(a, b api.ValueType) api.ValueType {
	if a == b {
		return a
	}
	if (a == i32 && b == f32) || (a == f32 && b == i32) {
		return i32
	}
	return i64
}

// payloadOffset is where a variant's payload starts.
func (t *Type) payloadOffset() uint32 {
	return alignTo(discSize(len(t.cases())), t.layout.align)
}

// schemaNode is more than the JSON of any one node of a schema without
// its names and members: {"maximum":…,"minimum":…,"type":"integer"} is the
// longest scalar; an object's, array's or case's wrapping is shorter.
const schemaNode = 128

// schemaNodeBytes bounds the bytes t's own node adds to its schema: the
// node, and its names (a record's and a variant's twice: as properties
// and as required).
func schemaNodeBytes(t *Type) int64 {
	n := int64(schemaNode)
	for _, f := range t.Fields {
		n = min(n+2*quotedLen(f.Name)+schemaNode, maxSchema)
	}
	for _, name := range t.Names {
		n = min(n+quotedLen(name)+1, maxSchema)
	}
	if t.Kind == Option || t.Kind == Result {
		n += 2 * schemaNode // the null, or the ok and error cases
	}
	return n
}

// quotedLen bounds the length of s as a JSON string (encoding/json
// escapes HTML characters and invalid UTF-8 as \uXXXX).
func quotedLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20 || b >= 0x80 || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&':
			n += 6
		default:
			n++
		}
	}
	return n
}
