package component

import (
	"context"
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The types of these tests, each with its layout computed the way the
// decoder does (children first). Package variables are set before the
// package's init, which fills prims, so primitives are made here too.
var (
	tBool, tS8, tU8, tS16, tU16 = prim(Bool), prim(S8), prim(U8), prim(S16), prim(U16)
	tS32, tU32, tS64, tU64      = prim(S32), prim(U32), prim(S64), prim(U64)
	tF32, tF64, tChar, tStr     = prim(F32), prim(F64), prim(Char), prim(String)
	tOwn                        = mkType(&Type{Kind: Own, Resource: &Resource{Name: "r"}})
	tBorrow                     = mkType(&Type{Kind: Borrow, Resource: &Resource{Name: "r"}})
	tRecU8U32U16                = mkType(&Type{Kind: Record, Fields: []Field{{"a", tU8}, {"b", tU32}, {"c", tU16}}})
	tRecU8U64                   = mkType(&Type{Kind: Record, Fields: []Field{{"a", tU8}, {"b", tU64}}})
	tTupU8F64                   = mkType(&Type{Kind: Tuple, Fields: []Field{{"", tU8}, {"", tF64}}})
	tTupU8U16                   = mkType(&Type{Kind: Tuple, Fields: []Field{{"", tU8}, {"", tU16}}})
	tVarMixed                   = mkType(&Type{Kind: Variant, Fields: []Field{{"a", nil}, {"b", tU32}, {"c", tF32}, {"d", tStr}}})
	tVarF32U64                  = mkType(&Type{Kind: Variant, Fields: []Field{{"a", tF32}, {"b", tU64}}})
	tVarF64F32                  = mkType(&Type{Kind: Variant, Fields: []Field{{"a", tF64}, {"b", tF32}}})
	tVarF64U32                  = mkType(&Type{Kind: Variant, Fields: []Field{{"a", tF64}, {"b", tU32}}})
	tOptU8, tOptStr, tOptU64    = mkType(&Type{Kind: Option, Elem: tU8}), mkType(&Type{Kind: Option, Elem: tStr}), mkType(&Type{Kind: Option, Elem: tU64})
	tResEmpty                   = mkType(&Type{Kind: Result})
	tResU32Str                  = mkType(&Type{Kind: Result, Ok: tU32, Err: tStr})
	tResErrU8                   = mkType(&Type{Kind: Result, Err: tU8})
	tEnum3                      = mkType(&Type{Kind: Enum, Names: labels(3)})
	tEnum257                    = mkType(&Type{Kind: Enum, Names: labels(257)})
	tEnum65537                  = mkType(&Type{Kind: Enum, Names: labels(65537)})
	tFlags0, tFlags3, tFlags8   = mkType(&Type{Kind: Flags}), mkType(&Type{Kind: Flags, Names: labels(3)}), mkType(&Type{Kind: Flags, Names: labels(8)})
	tFlags9, tFlags16, tFlags17 = mkType(&Type{Kind: Flags, Names: labels(9)}), mkType(&Type{Kind: Flags, Names: labels(16)}), mkType(&Type{Kind: Flags, Names: labels(17)})
	tFlags32                    = mkType(&Type{Kind: Flags, Names: labels(32)})
	tListU8, tListU32, tListStr = listOf(tU8), listOf(tU32), listOf(tStr)
	tRecNested                  = mkType(&Type{Kind: Record, Fields: []Field{{"s", tStr}, {"o", tOptU64}, {"c", tChar}}})
	tListNested                 = listOf(tRecNested)
	tRec17                      = mkType(&Type{Kind: Record, Fields: sameFields(17, tU32)})
	tOptTup                     = mkType(&Type{Kind: Option, Elem: tTupU8F64})
	tListVar                    = listOf(tVarMixed)
	tResListStr                 = mkType(&Type{Kind: Result, Ok: tListStr, Err: tEnum3})
)

func mkType(t *Type) *Type { t.layout = computeLayout(t); return t }

func prim(k Kind) *Type { return mkType(&Type{Kind: k}) }

func labels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "l" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	return out
}

func sameFields(n int, t *Type) []Field {
	out := make([]Field, n)
	for i := range out {
		out[i] = Field{Name: labels(n)[i], Type: t}
	}
	return out
}

// TestLayout holds every kind's size, alignment and flattening to the
// Component Model's canonical ABI (CanonicalABI.md: elem_size,
// alignment, flatten_type): a discriminant as small as its case count
// allows (u8 up to 256 cases, u16 up to 65536), a variant's payload
// after the discriminant aligned to its widest case, flattened slots
// joined case by case (equal types stay, i32 with f32 is i32, anything
// else is i64), records padded to their alignment, and flags in 0, 1, 2
// or 4 bytes.
func TestLayout(t *testing.T) {
	var (
		I32, I64, F32, F64 = api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeF32, api.ValueTypeF64
	)
	flat := func(ts ...api.ValueType) []api.ValueType { return ts }
	tests := []struct {
		t           *Type
		size, align uint32
		flat        []api.ValueType
	}{
		{tBool, 1, 1, flat(I32)},
		{tS8, 1, 1, flat(I32)},
		{tU8, 1, 1, flat(I32)},
		{tS16, 2, 2, flat(I32)},
		{tU16, 2, 2, flat(I32)},
		{tS32, 4, 4, flat(I32)},
		{tU32, 4, 4, flat(I32)},
		{tS64, 8, 8, flat(I64)},
		{tU64, 8, 8, flat(I64)},
		{tF32, 4, 4, flat(F32)},
		{tF64, 8, 8, flat(F64)},
		{tChar, 4, 4, flat(I32)},
		{tStr, 8, 4, flat(I32, I32)},
		{tOwn, 4, 4, flat(I32)},
		{tBorrow, 4, 4, flat(I32)},
		{tListU8, 8, 4, flat(I32, I32)},
		{tListNested, 8, 4, flat(I32, I32)},
		{tRecU8U32U16, 12, 4, flat(I32, I32, I32)},
		{tRecU8U64, 16, 8, flat(I32, I64)},
		{tTupU8F64, 16, 8, flat(I32, F64)},
		{tTupU8U16, 4, 2, flat(I32, I32)},
		{tVarMixed, 12, 4, flat(I32, I32, I32)}, // u32, f32 and string's ptr join to i32
		{tVarF32U64, 16, 8, flat(I32, I64)},     // f32 with i64 joins to i64
		{tVarF64F32, 16, 8, flat(I32, I64)},     // f64 with f32 joins to i64
		{tVarF64U32, 16, 8, flat(I32, I64)},
		{tOptU8, 2, 1, flat(I32, I32)},
		{tOptStr, 12, 4, flat(I32, I32, I32)},
		{tOptU64, 16, 8, flat(I32, I64)},
		{tOptTup, 24, 8, flat(I32, I32, F64)},
		{tResEmpty, 1, 1, flat(I32)},
		{tResU32Str, 12, 4, flat(I32, I32, I32)},
		{tResErrU8, 2, 1, flat(I32, I32)},
		{tEnum3, 1, 1, flat(I32)},
		{tEnum257, 2, 2, flat(I32)},
		{tEnum65537, 4, 4, flat(I32)},
		{tFlags0, 0, 1, nil},
		{tFlags3, 1, 1, flat(I32)},
		{tFlags8, 1, 1, flat(I32)},
		{tFlags9, 2, 2, flat(I32)},
		{tFlags16, 2, 2, flat(I32)},
		{tFlags17, 4, 4, flat(I32)},
		{tFlags32, 4, 4, flat(I32)},
		{tRecNested, 32, 8, flat(I32, I32, I32, I64, I32)},
		// 17 i32s: the flattening stops one past maxFlatParams, which
		// is all "spill to memory" needs.
		{tRec17, 68, 4, slices.Repeat(flat(I32), maxFlatParams+1)},
	}
	for _, tt := range tests {
		l := tt.t.layout
		if l.size != tt.size || l.align != tt.align || !slices.Equal(l.flat, tt.flat) {
			t.Errorf("%s: got size %d, align %d, flat %v; want %d, %d, %v", tt.t, l.size, l.align, l.flat, tt.size, tt.align, tt.flat)
		}
	}
}

// TestDiscSizeAndPayload: the discriminant's bytes by case count, and
// where a payload starts.
func TestDiscSizeAndPayload(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want uint32
	}{{1, 1}, {2, 1}, {256, 1}, {257, 2}, {1 << 16, 2}, {1<<16 + 1, 4}} {
		if got := discSize(tt.n); got != tt.want {
			t.Errorf("discSize(%d): got %d; want %d", tt.n, got, tt.want)
		}
	}
	for _, tt := range []struct {
		t    *Type
		want uint32
	}{{tOptU8, 1}, {tOptStr, 4}, {tOptU64, 8}, {tResErrU8, 1}, {tVarMixed, 4}, {tOptTup, 8}} {
		if got := tt.t.payloadOffset(); got != tt.want {
			t.Errorf("%s: payload at %d; want %d", tt.t, got, tt.want)
		}
	}
}

// TestFlatFunc: parameters spill to memory past 16 flat values, results
// past 1 (flatten_functype).
func TestFlatFunc(t *testing.T) {
	params := func(ts ...*Type) []Field {
		out := make([]Field, len(ts))
		for i, x := range ts {
			out[i] = Field{Name: labels(len(ts))[i], Type: x}
		}
		return out
	}
	sixteen := slices.Repeat([]*Type{tU32}, 16)
	tests := []struct {
		name              string
		ft                *FuncType
		params, results   int
		spilled, returned bool
	}{
		{"no params, no result", &FuncType{}, 0, 0, false, false},
		{"16 flat params", &FuncType{Params: params(sixteen...)}, 16, 0, false, false},
		{"17 flat params", &FuncType{Params: params(append(sixteen, tU8)...)}, 1, 0, true, false},
		{"a record of 17", &FuncType{Params: params(tRec17)}, 1, 0, true, false},
		{"8 strings", &FuncType{Params: params(slices.Repeat([]*Type{tStr}, 8)...)}, 16, 0, false, false},
		{"a u32 result", &FuncType{Result: tU32}, 0, 1, false, false},
		{"a flags0 result", &FuncType{Result: tFlags0}, 0, 0, false, false},
		{"a string result", &FuncType{Result: tStr}, 0, 1, false, true},
		{"an option result", &FuncType{Result: tOptU8}, 0, 1, false, true},
	}
	for _, tt := range tests {
		p, spilled := flatParams(tt.ft)
		r, returned := flatResults(tt.ft)
		if len(p) != tt.params || spilled != tt.spilled || len(r) != tt.results || returned != tt.returned {
			t.Errorf("%s: got %d params (spilled %v), %d results (through memory %v); want %d (%v), %d (%v)",
				tt.name, len(p), spilled, len(r), returned, tt.params, tt.spilled, tt.results, tt.returned)
		}
		if (spilled && p[0] != api.ValueTypeI32) || (returned && r[0] != api.ValueTypeI32) {
			t.Errorf("%s: a spill is passed as one i32 pointer; got %v, %v", tt.name, p, r)
		}
	}
	pt := paramTuple(&FuncType{Params: params(tU8, tU64, tStr)})
	if l := pt.layout; l.size != 24 || l.align != 8 {
		t.Errorf("the spilled tuple of (u8, u64, string): size %d, align %d; want 24, 8", l.size, l.align)
	}
}

// abiMemory is a guest for lowering and lifting: a memory of 128 KiB and
// a bump allocator as its realloc, which records what it was asked for.
type abiMemory struct {
	mem     api.Memory
	realloc api.Function
	next    uint32
	asked   [][2]uint32 // align, size
}

// reallocModule exports a memory of 2 pages and, as "realloc", the
// function it imports from "alloc".
const reallocModule = "\x00asm\x01\x00\x00\x00" +
	"\x01\x09\x01\x60\x04\x7f\x7f\x7f\x7f\x01\x7f" + // type 0: (i32, i32, i32, i32) -> i32
	"\x02\x11\x01\x05alloc\x07realloc\x00\x00" + // import alloc.realloc, type 0
	"\x05\x03\x01\x00\x02" + // one memory, at least 2 pages
	"\x07\x14\x02\x06memory\x02\x00\x07realloc\x00\x00" // export both

func newABIMemory(t *testing.T) *abiMemory {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	m := &abiMemory{next: 16}
	_, err := rt.NewHostModuleBuilder("alloc").NewFunctionBuilder().
		WithFunc(func(_ context.Context, _, _, align, size uint32) uint32 {
			m.asked = append(m.asked, [2]uint32{align, size})
			m.next = alignTo(m.next, align)
			p := m.next
			m.next += size
			return p
		}).Export("realloc").Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, []byte(reallocModule))
	if err != nil {
		t.Fatal(err)
	}
	m.mem, m.realloc = mod.ExportedMemory("memory"), mod.ExportedFunction("realloc")
	return m
}

func (m *abiMemory) cx(utf16 bool) *cx {
	return &cx{ctx: context.Background(), mem: m.mem, realloc: m.realloc, utf16: utf16, budget: budget{limit: 1 << 20}}
}

// roundTrips are values of each kind, as the host holds them.
var roundTrips = []struct {
	t *Type
	v any
}{
	{tBool, true}, {tBool, false},
	{tS8, int64(math.MinInt8)}, {tU8, uint64(math.MaxUint8)},
	{tS16, int64(math.MinInt16)}, {tU16, uint64(math.MaxUint16)},
	{tS32, int64(math.MinInt32)}, {tU32, uint64(math.MaxUint32)},
	{tS64, int64(math.MinInt64)}, {tU64, uint64(math.MaxUint64)},
	{tF32, float32(-1.5)}, {tF64, math.Pi}, {tF64, math.Inf(-1)},
	{tChar, 'é'}, {tChar, '😀'},
	{tStr, ""}, {tStr, "héllo, 世界 😀"},
	{tListU8, []byte{0, 1, 0xff}}, {tListU8, []byte(nil)}, // an empty list lifts as nil (ToJSON writes [])
	{tListU32, []any{uint64(1), uint64(2), uint64(math.MaxUint32)}},
	{tListStr, []any{"a", "", "ü"}},
	{tRecU8U32U16, []any{uint64(1), uint64(2), uint64(3)}},
	{tRecU8U64, []any{uint64(9), uint64(math.MaxUint64)}},
	{tTupU8F64, []any{uint64(7), 2.5}},
	{tVarMixed, Case{Index: 0}}, {tVarMixed, Case{Index: 1, Val: uint64(9)}},
	{tVarMixed, Case{Index: 2, Val: float32(1.25)}}, {tVarMixed, Case{Index: 3, Val: "x"}},
	{tVarF32U64, Case{Index: 0, Val: float32(-0.5)}}, {tVarF32U64, Case{Index: 1, Val: uint64(1 << 40)}},
	{tVarF64F32, Case{Index: 0, Val: -2.25}}, {tVarF64F32, Case{Index: 1, Val: float32(3.5)}},
	{tVarF64U32, Case{Index: 1, Val: uint64(math.MaxUint32)}},
	{tOptStr, Case{Index: 0}}, {tOptStr, Case{Index: 1, Val: "some"}},
	{tOptU64, Case{Index: 1, Val: uint64(42)}},
	{tOptTup, Case{Index: 1, Val: []any{uint64(3), 0.125}}},
	{tResEmpty, Case{Index: 1}},
	{tResU32Str, Case{Index: 0, Val: uint64(1)}}, {tResU32Str, Case{Index: 1, Val: "bad"}},
	{tResErrU8, Case{Index: 0}}, {tResErrU8, Case{Index: 1, Val: uint64(8)}},
	{tEnum3, Case{Index: 2}}, {tEnum257, Case{Index: 256}},
	{tFlags0, uint32(0)}, {tFlags3, uint32(0b101)}, {tFlags9, uint32(1 << 8)},
	{tFlags17, uint32(1 << 16)}, {tFlags32, uint32(math.MaxUint32)},
	{tListNested, []any{
		[]any{"one", Case{Index: 0}, 'x'},
		[]any{"two", Case{Index: 1, Val: uint64(2)}, '😀'},
	}},
	{tListVar, []any{Case{Index: 3, Val: "in a list"}, Case{Index: 2, Val: float32(0.5)}}},
	{tResListStr, Case{Index: 0, Val: []any{"x", "y"}}}, {tResListStr, Case{Index: 1, Val: Case{Index: 1}}},
	{tRec17, slices.Repeat([]any{uint64(17)}, 17)},
}

// TestRoundTrip lowers each value into a wazero memory and lifts it back,
// both through memory (store, load) and flat (lowerFlat, liftFlat), in
// UTF-8 and in UTF-16: what comes back is what went in, and the flat
// form has as many values as the type's flattening.
func TestRoundTrip(t *testing.T) {
	for _, enc := range []struct {
		name  string
		utf16 bool
	}{{"utf8", false}, {"utf16", true}} {
		t.Run(enc.name, func(t *testing.T) {
			m := newABIMemory(t)
			for _, tt := range roundTrips {
				c := m.cx(enc.utf16)
				l := tt.t.layout
				var got any
				if r := catch(func() {
					ptr := c.alloc(l.align, l.size)
					c.store(tt.t, tt.v, ptr)
					c.newCrossing()
					got = c.load(tt.t, ptr)
				}); r != nil {
					t.Errorf("%s %v through memory: %v", tt.t, tt.v, r)
					continue
				}
				if !reflect.DeepEqual(got, tt.v) {
					t.Errorf("%s through memory: got %#v; want %#v", tt.t, got, tt.v)
				}
				var vals []uint64
				var i int
				if r := catch(func() {
					vals = c.lowerFlat(tt.t, tt.v, nil)
					c.newCrossing()
					got = c.liftFlat(tt.t, vals, &i)
				}); r != nil {
					t.Errorf("%s %v flat: %v", tt.t, tt.v, r)
					continue
				}
				if !reflect.DeepEqual(got, tt.v) {
					t.Errorf("%s flat: got %#v; want %#v", tt.t, got, tt.v)
				}
				if want := len(l.flat); len(l.flat) <= maxFlatParams && (len(vals) != want || i != want) {
					t.Errorf("%s flat: lowered %d values, lifted %d; want %d, its flattening", tt.t, len(vals), i, want)
				}
			}
		})
	}
}

// TestStoreBytes checks the bytes lowering writes against the spec's
// layout, and what it asks realloc for.
func TestStoreBytes(t *testing.T) {
	m := newABIMemory(t)
	c := m.cx(false)
	read := func(ptr, n uint32) []byte { b, _ := m.mem.Read(ptr, n); return b }

	ptr := c.alloc(4, 12)
	c.store(tRecU8U32U16, []any{uint64(1), uint64(0x02020202), uint64(0x0303)}, ptr)
	if b := read(ptr, 12); b[0] != 1 || binary.LittleEndian.Uint32(b[4:]) != 0x02020202 || binary.LittleEndian.Uint16(b[8:]) != 0x0303 {
		t.Errorf("record{u8, u32, u16}: got % x; want its fields at 0, 4 and 8", b)
	}

	ptr = c.alloc(8, 16)
	c.store(tOptU64, Case{Index: 1, Val: uint64(7)}, ptr)
	if b := read(ptr, 16); b[0] != 1 || binary.LittleEndian.Uint64(b[8:]) != 7 {
		t.Errorf("option<u64> some(7): got % x; want discriminant 1 at 0, 7 at 8", b)
	}

	ptr = c.alloc(2, 2)
	c.store(tEnum257, Case{Index: 256}, ptr)
	if b := read(ptr, 2); binary.LittleEndian.Uint16(b) != 256 {
		t.Errorf("enum of 257, case 256: got % x; want a 2-byte discriminant", b)
	}

	m.asked = nil
	ptr = c.alloc(4, 12)
	c.store(tResU32Str, Case{Index: 1, Val: "bad"}, ptr)
	b := read(ptr, 12)
	sp, sn := binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
	if b[0] != 1 || sn != 3 || string(read(sp, sn)) != "bad" {
		t.Errorf("result<u32, string> err(\"bad\"): got % x (string %d bytes at %d); want discriminant 1, then its pointer and length", b, sn, sp)
	}
	if want := [][2]uint32{{4, 12}, {1, 3}}; !reflect.DeepEqual(m.asked, want) {
		t.Errorf("realloc asked for %v; want %v (align, size)", m.asked, want)
	}

	m.asked = nil
	p, n := c.lowerSeq(tListU32, []any{uint64(1), uint64(2), uint64(3)})
	if n != 3 || binary.LittleEndian.Uint32(read(p+8, 4)) != 3 || !reflect.DeepEqual(m.asked, [][2]uint32{{4, 12}}) {
		t.Errorf("list<u32> [1 2 3]: %d elements at %d, realloc asked for %v; want 3 in one block of 12 aligned to 4", n, p, m.asked)
	}

	c = m.cx(true)
	s := "h😀"
	p, n = c.lowerSeq(tStr, s)
	if n != 3 || p%2 != 0 || binary.LittleEndian.Uint16(read(p, 2)) != 'h' || binary.LittleEndian.Uint16(read(p+2, 2)) != 0xd83d {
		t.Errorf("%q in UTF-16: %d code units at %d; want 3, aligned to 2, a surrogate pair after h", s, n, p)
	}
}

// TestLiftFlatCoercion: lifting takes the low bits of a slot and reads
// any non-zero i32 as true, as lift_flat does.
func TestLiftFlatCoercion(t *testing.T) {
	c := newABIMemory(t).cx(false)
	for _, tt := range []struct {
		t    *Type
		slot uint64
		want any
	}{
		{tBool, 2, true},
		{tBool, 0, false},
		{tU8, 0x1ff, uint64(0xff)},
		{tS8, 0xff, int64(-1)},
		{tU16, 0x1ffff, uint64(0xffff)},
		{tS16, 0x8000, int64(math.MinInt16)},
		{tS32, 0xffffffff, int64(-1)},
		{tU32, 0x1_0000_0005, uint64(5)},
	} {
		var i int
		if got := c.liftFlat(tt.t, []uint64{tt.slot}, &i); got != tt.want {
			t.Errorf("%s from slot %#x: got %#v; want %#v", tt.t, tt.slot, got, tt.want)
		}
	}
}

// TestLiftTraps: what the guest may get wrong is a *Trap, never a host
// panic of another kind.
func TestLiftTraps(t *testing.T) {
	m := newABIMemory(t)
	put := func(ptr uint32, b ...byte) uint32 { m.mem.Write(ptr, b); return ptr }
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	tests := []struct {
		name string
		lift func(c *cx) any
		want string
	}{
		{"surrogate char", func(c *cx) any { return c.load(tChar, put(64, le32(0xd800)...)) }, "not a Unicode scalar value"},
		{"char past U+10FFFF", func(c *cx) any { return c.load(tChar, put(64, le32(0x110000)...)) }, "not a Unicode scalar value"},
		{"invalid UTF-8", func(c *cx) any { put(200, 0xff, 0xfe); return c.loadString(200, 2) }, "not valid UTF-8"},
		{"option discriminant 2", func(c *cx) any { return c.load(tOptU8, put(64, 2, 0)) }, "discriminant 2"},
		{"enum discriminant 3", func(c *cx) any { var i int; return c.liftFlat(tEnum3, []uint64{3}, &i) }, "discriminant 3"},
		{"flags beyond labels", func(c *cx) any { return c.load(tFlags3, put(64, 0b1000)) }, "bits beyond its 3 labels"},
		{"flat flags beyond labels", func(c *cx) any { var i int; return c.liftFlat(tFlags9, []uint64{1 << 9}, &i) }, "bits beyond its 9 labels"},
		{"misaligned u32", func(c *cx) any { return c.load(tU32, 65) }, "not aligned to 4"},
		{"misaligned list", func(c *cx) any { return c.loadList(tU64, 4, 1) }, "not aligned to 8"},
		{"string out of bounds", func(c *cx) any { return c.loadString(m.mem.Size()-1, 2) }, "out of bounds"},
		{"list too long", func(c *cx) any { return c.loadList(tU64, 0, math.MaxUint32) }, "does not fit in memory"},
		{"too few flat values", func(c *cx) any { var i int; return c.liftFlat(tStr, []uint64{0}, &i) }, "too few core values"},
		{"odd UTF-16 pointer", func(c *cx) any { c.utf16 = true; return c.loadString(201, 1) }, "not aligned to 2"},
	}
	for _, tt := range tests {
		c := m.cx(false)
		r := catch(func() { tt.lift(c) })
		tr, ok := r.(*Trap)
		if !ok || !strings.Contains(tr.Msg, tt.want) {
			t.Errorf("%s: got %v; want a *Trap saying %q", tt.name, r, tt.want)
		}
	}
	// Without the canonical options a function needs, lowering traps too.
	c := &cx{ctx: context.Background(), mem: m.mem, budget: budget{limit: 1 << 20}}
	if r, ok := catch(func() { c.lowerSeq(tStr, "x") }).(*Trap); !ok || !strings.Contains(r.Msg, "no realloc option") {
		t.Errorf("lowering a string without realloc: %v; want a *Trap naming the option", r)
	}
	c = &cx{ctx: context.Background(), budget: budget{limit: 1 << 20}}
	if r, ok := catch(func() { c.load(tU8, 0) }).(*Trap); !ok || !strings.Contains(r.Msg, "no memory option") {
		t.Errorf("lifting from memory without a memory: %v; want a *Trap naming the option", r)
	}
}
