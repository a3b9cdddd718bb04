package component

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// Values cross the canonical ABI as Go values:
//
//	bool                 bool
//	s8 … s64             int64
//	u8 … u64             uint64
//	f32, f64             float32, float64
//	char                 rune
//	string               string
//	list<u8>             []byte
//	list<T>              []any
//	record, tuple        []any, in field order
//	variant, enum,
//	option, result       Case (option: 0 none, 1 some; result: 0 ok, 1 err)
//	flags                uint32, bit i for label i
//	own, borrow          the host's object (imported resources) or the
//	                     guest's rep as uint32 (the component's own)

// Case is a value of a variant, enum, option or result.
type Case struct {
	Index uint32
	Val   any // nil when the case has no payload
}

// Trap is a failure of the canonical ABI caused by the guest (a pointer
// out of bounds, an invalid character or discriminant, a dead handle).
type Trap struct{ Msg string }

func (t *Trap) Error() string { return "canonical ABI: " + t.Msg }

func trap(format string, args ...any) {
	panic(&Trap{Msg: fmt.Sprintf(format, args...)})
}

// cx is the context of one lift or lower: the instance, its memory and
// realloc from the canonical options.
type cx struct {
	ctx     context.Context
	inst    *Instance
	mem     api.Memory
	realloc api.Function
	utf16   bool
	budget  budget
}

func (c *cx) memory() api.Memory {
	if c.mem == nil {
		trap("the function needs linear memory but has no memory option")
	}
	return c.mem
}

func (c *cx) read(ptr, n uint32) []byte {
	b, ok := c.memory().Read(ptr, n)
	if !ok {
		trap("%d bytes at %d are out of bounds (memory is %d bytes)", n, ptr, c.memory().Size())
	}
	return b
}

func (c *cx) checkAlign(ptr, align uint32) {
	if ptr%align != 0 {
		trap("pointer %d is not aligned to %d", ptr, align)
	}
}

// alloc calls the guest's realloc for a fresh block.
func (c *cx) alloc(align, size uint32) uint32 {
	if c.realloc == nil {
		trap("the function needs realloc but has no realloc option")
	}
	res, err := c.realloc.Call(c.ctx, 0, 0, uint64(align), uint64(size))
	if err != nil {
		panic(err)
	}
	ptr := api.DecodeU32(res[0])
	c.checkAlign(ptr, align)
	c.read(ptr, size)
	return ptr
}

// load reads a value of type t at ptr.
func (c *cx) load(t *Type, ptr uint32) any {
	c.charge(SlotBytes)
	l := t.layout
	c.checkAlign(ptr, l.align)
	b := c.read(ptr, l.size)
	switch t.Kind {
	case Bool:
		return b[0] != 0
	case S8:
		return int64(int8(b[0]))
	case U8:
		return uint64(b[0])
	case S16:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case U16:
		return uint64(binary.LittleEndian.Uint16(b))
	case S32:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case U32:
		return uint64(binary.LittleEndian.Uint32(b))
	case S64:
		return int64(binary.LittleEndian.Uint64(b))
	case U64:
		return binary.LittleEndian.Uint64(b)
	case F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case Char:
		return checkChar(binary.LittleEndian.Uint32(b))
	case String:
		return c.loadString(binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]))
	case List:
		return c.loadList(t.Elem, binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]))
	case Record, Tuple:
		out := make([]any, len(t.Fields))
		var off uint32
		for i, f := range t.Fields {
			off = alignTo(off, f.Type.layout.align)
			out[i] = c.load(f.Type, ptr+off)
			off += f.Type.layout.size
		}
		return out
	case Flags:
		var v uint32
		switch l.size {
		case 1:
			v = uint32(b[0])
		case 2:
			v = uint32(binary.LittleEndian.Uint16(b))
		case 4:
			v = binary.LittleEndian.Uint32(b)
		}
		if len(t.Names) < 32 && v>>len(t.Names) != 0 {
			trap("flags value 0x%x has bits beyond its %d labels", v, len(t.Names))
		}
		return v
	case Own, Borrow:
		return c.liftHandle(t, binary.LittleEndian.Uint32(b))
	}
	cases := t.cases()
	var disc uint32
	switch discSize(len(cases)) {
	case 1:
		disc = uint32(b[0])
	case 2:
		disc = uint32(binary.LittleEndian.Uint16(b))
	default:
		disc = binary.LittleEndian.Uint32(b)
	}
	if int(disc) >= len(cases) {
		trap("discriminant %d of a %s with %d cases", disc, t.Kind, len(cases))
	}
	if p := cases[disc]; p != nil {
		return Case{Index: disc, Val: c.load(p, ptr+t.payloadOffset())}
	}
	return Case{Index: disc}
}

func checkChar(v uint32) rune {
	if v >= 0x110000 || (v >= 0xd800 && v < 0xe000) {
		trap("%#x is not a Unicode scalar value", v)
	}
	return rune(v)
}

func (c *cx) loadString(ptr, n uint32) string {
	if c.utf16 {
		c.checkAlign(ptr, 2)
		if n > math.MaxInt32/2 {
			trap("string of %d code units is too long", n)
		}
		b := c.read(ptr, 2*n)
		// The code units, then up to 3 bytes of UTF-8 for each.
		c.charge(5 * int64(n))
		u := make([]uint16, n)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		return string(utf16.Decode(u))
	}
	b := c.read(ptr, n)
	c.charge(int64(n))
	if !utf8.Valid(b) {
		trap("string at %d is not valid UTF-8", ptr)
	}
	return string(b)
}

func (c *cx) loadList(e *Type, ptr, n uint32) any {
	el := e.layout
	c.checkAlign(ptr, el.align)
	total := uint64(n) * uint64(el.size)
	if total > math.MaxUint32 {
		trap("list of %d elements does not fit in memory", n)
	}
	c.read(ptr, uint32(total))
	// Memory bounds the bytes of a list, not the work of lifting it
	// (elements that all point at one string, elements of size 0): the
	// budget does, counted before anything is allocated.
	if e.Kind == U8 {
		c.charge(int64(n))
		return append([]byte(nil), c.read(ptr, n)...)
	}
	c.charge(int64(n) * SlotBytes)
	out := make([]any, n)
	for i := range out {
		out[i] = c.load(e, ptr+uint32(i)*el.size)
	}
	return out
}

// store writes v, of type t, at ptr.
func (c *cx) store(t *Type, v any, ptr uint32) {
	c.charge(lowerNode)
	l := t.layout
	c.checkAlign(ptr, l.align)
	switch t.Kind {
	case Bool:
		b := c.read(ptr, 1)
		b[0] = 0
		if v.(bool) {
			b[0] = 1
		}
	case S8, U8, S16, U16, S32, U32, S64, U64, Char, F32, F64, Flags, Own, Borrow:
		var bits uint64
		switch x := v.(type) {
		case int64:
			bits = uint64(x)
		case uint64:
			bits = x
		case rune:
			bits = uint64(x)
		case uint32:
			bits = uint64(x)
		case float32:
			bits = uint64(math.Float32bits(x))
		case float64:
			bits = math.Float64bits(x)
		default:
			bits = uint64(c.lowerHandle(t, v))
		}
		b := c.read(ptr, l.size)
		switch l.size {
		case 1:
			b[0] = byte(bits)
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(bits))
		case 4:
			binary.LittleEndian.PutUint32(b, uint32(bits))
		case 8:
			binary.LittleEndian.PutUint64(b, bits)
		}
	case String, List:
		p, n := c.lowerSeq(t, v)
		b := c.read(ptr, 8)
		binary.LittleEndian.PutUint32(b, p)
		binary.LittleEndian.PutUint32(b[4:], n)
	case Record, Tuple:
		vals := v.([]any)
		var off uint32
		for i, f := range t.Fields {
			off = alignTo(off, f.Type.layout.align)
			c.store(f.Type, vals[i], ptr+off)
			off += f.Type.layout.size
		}
	default:
		cv := v.(Case)
		cases := t.cases()
		b := c.read(ptr, l.size)
		switch discSize(len(cases)) {
		case 1:
			b[0] = byte(cv.Index)
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(cv.Index))
		default:
			binary.LittleEndian.PutUint32(b, cv.Index)
		}
		if p := cases[cv.Index]; p != nil {
			c.store(p, cv.Val, ptr+t.payloadOffset())
		}
	}
}

// lowerSeq copies a string or list into fresh guest memory.
func (c *cx) lowerSeq(t *Type, v any) (ptr, n uint32) {
	if t.Kind == String {
		s := v.(string)
		if c.utf16 {
			c.charge(6 * int64(len(s))) // its runes, then its code units
			u := utf16.Encode([]rune(s))
			ptr = c.alloc(2, uint32(2*len(u)))
			b := c.read(ptr, uint32(2*len(u)))
			for i, x := range u {
				binary.LittleEndian.PutUint16(b[2*i:], x)
			}
			return ptr, uint32(len(u))
		}
		if len(s) > math.MaxInt32 {
			trap("string too long")
		}
		c.charge(int64(len(s)))
		ptr = c.alloc(1, uint32(len(s)))
		copy(c.read(ptr, uint32(len(s))), s)
		return ptr, uint32(len(s))
	}
	el := t.Elem.layout
	if b, ok := v.([]byte); ok {
		c.charge(int64(len(b)))
		ptr = c.alloc(1, uint32(len(b)))
		copy(c.read(ptr, uint32(len(b))), b)
		return ptr, uint32(len(b))
	}
	vals := v.([]any)
	total := uint64(len(vals)) * uint64(el.size)
	if total > math.MaxInt32 {
		trap("list too long")
	}
	c.charge(int64(total))
	ptr = c.alloc(el.align, uint32(total))
	for i, x := range vals {
		c.store(t.Elem, x, ptr+uint32(i)*el.size)
	}
	return ptr, uint32(len(vals))
}

// liftFlat reads a value of type t from the flat core values at *i.
// Slots joined by a variant hold raw bits, so taking the low bits of a
// wider slot is the coercion the canonical ABI specifies.
func (c *cx) liftFlat(t *Type, vals []uint64, i *int) any {
	c.charge(SlotBytes)
	next := func() uint64 {
		if *i >= len(vals) {
			trap("too few core values")
		}
		v := vals[*i]
		*i++
		return v
	}
	switch t.Kind {
	case Bool:
		return uint32(next()) != 0
	case S8:
		return int64(int8(next()))
	case U8:
		return uint64(uint8(next()))
	case S16:
		return int64(int16(next()))
	case U16:
		return uint64(uint16(next()))
	case S32:
		return int64(int32(next()))
	case U32:
		return uint64(uint32(next()))
	case S64:
		return int64(next())
	case U64:
		return next()
	case F32:
		return math.Float32frombits(uint32(next()))
	case F64:
		return math.Float64frombits(next())
	case Char:
		return checkChar(uint32(next()))
	case String:
		p, n := uint32(next()), uint32(next())
		return c.loadString(p, n)
	case List:
		p, n := uint32(next()), uint32(next())
		return c.loadList(t.Elem, p, n)
	case Record, Tuple:
		out := make([]any, len(t.Fields))
		for k, f := range t.Fields {
			out[k] = c.liftFlat(f.Type, vals, i)
		}
		return out
	case Flags:
		if len(t.Names) == 0 {
			return uint32(0)
		}
		v := uint32(next())
		if len(t.Names) < 32 && v>>len(t.Names) != 0 {
			trap("flags value 0x%x has bits beyond its %d labels", v, len(t.Names))
		}
		return v
	case Own, Borrow:
		return c.liftHandle(t, uint32(next()))
	}
	start := *i
	disc := uint32(next())
	cases := t.cases()
	if int(disc) >= len(cases) {
		trap("discriminant %d of a %s with %d cases", disc, t.Kind, len(cases))
	}
	out := Case{Index: disc}
	if p := cases[disc]; p != nil {
		out.Val = c.liftFlat(p, vals, i)
	}
	*i = start + len(t.layout.flat)
	return out
}

// lowerFlat appends v, of type t, as flat core values.
func (c *cx) lowerFlat(t *Type, v any, out []uint64) []uint64 {
	c.charge(lowerNode)
	switch t.Kind {
	case Bool:
		if v.(bool) {
			return append(out, 1)
		}
		return append(out, 0)
	case S8, S16, S32:
		return append(out, uint64(uint32(int32(v.(int64)))))
	case U8, U16, U32:
		return append(out, uint64(uint32(v.(uint64))))
	case S64:
		return append(out, uint64(v.(int64)))
	case U64:
		return append(out, v.(uint64))
	case F32:
		return append(out, uint64(math.Float32bits(v.(float32))))
	case F64:
		return append(out, math.Float64bits(v.(float64)))
	case Char:
		return append(out, uint64(uint32(v.(rune))))
	case String, List:
		p, n := c.lowerSeq(t, v)
		return append(out, uint64(p), uint64(n))
	case Record, Tuple:
		vals := v.([]any)
		for k, f := range t.Fields {
			out = c.lowerFlat(f.Type, vals[k], out)
		}
		return out
	case Flags:
		if len(t.Names) == 0 {
			return out
		}
		return append(out, uint64(v.(uint32)))
	case Own, Borrow:
		return append(out, uint64(c.lowerHandle(t, v)))
	}
	cv := v.(Case)
	start := len(out)
	out = append(out, uint64(cv.Index))
	if p := t.cases()[cv.Index]; p != nil {
		out = c.lowerFlat(p, cv.Val, out)
	}
	for len(out) < start+len(t.layout.flat) {
		out = append(out, 0)
	}
	return out
}

// flatParams returns the core parameter types of a function lowered or
// lifted with type ft, and whether they spill to memory.
func flatParams(ft *FuncType) ([]api.ValueType, bool) {
	var flat []api.ValueType
	for _, p := range ft.Params {
		flat = append(flat, p.Type.layout.flat...)
	}
	if len(flat) > maxFlatParams {
		return []api.ValueType{i32}, true
	}
	return flat, false
}

// flatResults returns the core result types and whether they come back
// through memory.
func flatResults(ft *FuncType) ([]api.ValueType, bool) {
	if ft.Result == nil {
		return nil, false
	}
	flat := ft.Result.layout.flat
	if len(flat) > maxFlatResults {
		return []api.ValueType{i32}, true
	}
	return flat, false
}

const (
	maxFlatParams  = 16
	maxFlatResults = 1
)

// paramTuple is the tuple of ft's parameters, for spilling.
func paramTuple(ft *FuncType) *Type {
	t := &Type{Kind: Tuple, Fields: make([]Field, len(ft.Params))}
	for i, p := range ft.Params {
		t.Fields[i] = Field{Type: p.Type}
	}
	t.layout = computeLayout(t)
	return t
}
