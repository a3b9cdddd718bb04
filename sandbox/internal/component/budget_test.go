package component

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// memoryModule is a core module exporting a memory of 2 pages.
const memoryModule = "\x00asm\x01\x00\x00\x00" +
	"\x05\x03\x01\x00\x02" + // one memory, at least 2 pages
	"\x07\x0a\x01\x06memory\x02\x00" // exported as "memory"

// testMemory returns a fresh memory of 128 KiB.
func testMemory(t testing.TB) api.Memory {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Instantiate(ctx, []byte(memoryModule))
	if err != nil {
		t.Fatal(err)
	}
	return mod.ExportedMemory("memory")
}

func listOf(e *Type) *Type {
	t := &Type{Kind: List, Elem: e}
	t.layout = computeLayout(t)
	return t
}

// catch runs f and returns what it panicked with.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestLiftBudget lifts a list whose strings all point at one region of
// the guest's memory (each element copies it again): the crossing stops
// before its bytes would pass the budget, having copied no more; and a
// crossing whose call has ended stops within ctxEvery elements, whatever
// its budget.
func TestLiftBudget(t *testing.T) {
	mem := testMemory(t)
	const region, n = 60 << 10, 4096 // 240 MiB if copied in full
	pairs := uint32(region)
	for i := range uint32(n) {
		b, _ := mem.Read(pairs+8*i, 8)
		binary.LittleEndian.PutUint32(b, 0)
		binary.LittleEndian.PutUint32(b[4:], region)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		limit    int64
		want     func(any) bool
		maxSpent int64
	}{
		{"budget", context.Background(), 1 << 20,
			func(r any) bool { e, ok := r.(*ValueBudgetError); return ok && e.Limit == 1<<20 }, 1 << 20},
		{"call ended", canceled, 1 << 40,
			func(r any) bool { e, ok := r.(*stopped); return ok && errors.Is(e, context.Canceled) }, ctxEvery * (region + 2*SlotBytes)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &cx{ctx: tt.ctx, mem: mem, budget: budget{limit: tt.limit}}
			r := catch(func() { c.loadList(prims[0x73], pairs, n) })
			if !tt.want(r) {
				t.Fatalf("lifting %d strings of %d bytes from one region: %v", n, region, r)
			}
			if c.budget.spent > tt.maxSpent {
				t.Errorf("spent %d bytes before stopping, want at most %d", c.budget.spent, tt.maxSpent)
			}
		})
	}

	// Lowering counts too, before it asks the guest for memory (this
	// crossing has no realloc: it would trap asking for it).
	c := &cx{ctx: context.Background(), mem: mem, budget: budget{limit: 1 << 16}}
	big := strings.Repeat("x", 1<<17)
	if r := catch(func() { c.lowerSeq(prims[0x73], big) }); !isBudget(r) {
		t.Errorf("lowering a string over the budget: %v, want a *ValueBudgetError", r)
	}
	// Within the budget, each crossing starts afresh.
	c = &cx{ctx: context.Background(), mem: mem, budget: budget{limit: 3 * region}}
	for i := range 4 {
		c.newCrossing()
		if r := catch(func() { c.loadList(prims[0x73], pairs, 2) }); r != nil {
			t.Fatalf("crossing %d of 2 strings within the budget: %v", i, r)
		}
	}
}

func isBudget(r any) bool { _, ok := r.(*ValueBudgetError); return ok }

// sized is a host object of a fixed size (as a wasi:io error is).
type sized int64

func (s sized) HostBytes() int64 { return int64(s) }

// TestHostMemory charges one instance's account as host functions do
// (wasi:http's fields: sandbox/internal/wasip2's TestFieldsHostMemory): past the
// limit a charge fails (panics with a plain *HostMemoryError) and holds
// nothing; a handle costs handleBytes and what its [Sized] object holds,
// until it is removed (dropped, or its ownership lifted).
func TestHostMemory(t *testing.T) {
	inst := &Instance{mem: hostMem{limit: 1 << 20}}
	inst.Charge("a test", 1<<20-100)
	r := catch(func() { inst.Charge("a hoard", 101) })
	e, ok := r.(*HostMemoryError)
	if !ok || e.Limit != 1<<20 || e.Need != 101 || e.Held != 1<<20-100 || !strings.Contains(e.Error(), "memory limit of 1048576 bytes") {
		t.Fatalf("101 bytes over 1 MiB less 100: %v", r)
	}
	if inst.HostBytes() != 1<<20-100 {
		t.Errorf("after the refusal: %d bytes held", inst.HostBytes())
	}
	inst.Release(1<<20 - 100)
	if inst.HostBytes() != 0 {
		t.Errorf("released, still %d bytes held", inst.HostBytes())
	}

	inst.handles.mem = &inst.mem
	res := &Resource{Name: "error"}
	const size = 100 << 10
	h := inst.handles.add(res, sized(size), true)
	if want := handleBytes + int64(size); inst.HostBytes() != want {
		t.Errorf("a handle to an object of %d bytes: %d bytes held, want %d", size, inst.HostBytes(), want)
	}
	inst.handles.remove(res, h)
	if inst.HostBytes() != 0 {
		t.Errorf("a removed handle still holds %d bytes", inst.HostBytes())
	}
}

// TestSchemaEstimate checks that layout.schema bounds the JSON Schema of
// each kind of type from above, names needing escapes included: the
// schema budget relies on it to refuse before building.
func TestSchemaEstimate(t *testing.T) {
	mk := func(t *Type) *Type { t.layout = computeLayout(t); return t }
	u64, s64, str := prims[0x77], prims[0x78], prims[0x73]
	odd := "a<\"\\\x01é\xff"
	rec := mk(&Type{Kind: Record, Fields: []Field{{"x", s64}, {odd, str}}})
	types := []*Type{
		u64, s64, prims[0x74], prims[0x7f], prims[0x76],
		listOf(u64), rec,
		mk(&Type{Kind: Tuple, Fields: []Field{{"", rec}, {"", u64}}}),
		mk(&Type{Kind: Variant, Fields: []Field{{"none", nil}, {odd, rec}}}),
		mk(&Type{Kind: Enum, Names: []string{"a", odd}}),
		mk(&Type{Kind: Flags, Names: []string{"r", odd, "x"}}),
		mk(&Type{Kind: Option, Elem: rec}),
		mk(&Type{Kind: Result, Ok: rec, Err: str}),
		mk(&Type{Kind: Result}),
	}
	for _, ty := range types {
		b, err := json.Marshal(Schema(ty))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) > ty.layout.schema {
			t.Errorf("%s: schema of %d bytes, estimated at %d", ty, len(b), ty.layout.schema)
		}
	}
	// A DAG that doubles at every level saturates rather than overflows.
	ty := rec
	for range 70 {
		ty = mk(&Type{Kind: Tuple, Fields: []Field{{"", ty}, {"", ty}}})
	}
	if ty.layout.schema != maxSchema {
		t.Errorf("estimate of a type of 2^70 nodes: %d, want the cap %d", ty.layout.schema, int64(maxSchema))
	}
}

// TestToolBytesBound checks the weighing of the schema budget on a real
// component (kinds, built by scripts/components.sh): each tool's
// definition as JSON is no larger than toolBytes says.
func TestToolBytesBound(t *testing.T) {
	wasm, _ := os.ReadFile(filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm"))
	if wasm == nil {
		t.Skip("skipping: MCPHOST_COMPONENTS has no kinds.wasm; run scripts/components.sh")
	}
	c, err := Decode(wasm)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	cp, err := Compile(ctx, rt, c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, _, err := cp.Tools()
	if err != nil || len(tools) == 0 {
		t.Fatalf("%d tools, %v", len(tools), err)
	}
	var real, weighed int64
	for _, tl := range tools {
		b, _ := json.Marshal(tl.Def)
		est := toolBytes(tl.Func, tl.Name, tl.Def.Description)
		if int64(len(b)) > est {
			t.Errorf("%s: %d bytes, weighed at %d", tl.Name, len(b), est)
		}
		real, weighed = real+int64(len(b)), weighed+est
	}
	t.Logf("%d tools: %d bytes of definitions, weighed at %d", len(tools), real, weighed)
	// Under a budget smaller than the list, Tools refuses.
	cp.Limits.ValueBytes = 1 << 10
	if _, _, err := cp.Tools(); !errors.As(err, new(*SchemaBudgetError)) {
		t.Errorf("under a 1 KiB budget: %v, want a *SchemaBudgetError", err)
	}
}

// FuzzLift lifts values of several types from guest memory the fuzzer
// writes (untrusted bytes): lifting fails only with a *Trap or a
// *ValueBudgetError, and never counts (so never copies) past its budget.
func FuzzLift(f *testing.F) {
	mk := func(t *Type) *Type { t.layout = computeLayout(t); return t }
	str, u32, u8 := prims[0x73], prims[0x79], prims[0x7d]
	opt := mk(&Type{Kind: Option, Elem: str})
	types := []*Type{
		listOf(str),
		listOf(listOf(u8)),
		mk(&Type{Kind: Record, Fields: []Field{{"s", str}, {"xs", listOf(mk(&Type{Kind: Tuple, Fields: []Field{{"", u32}, {"", opt}}}))}}}),
		mk(&Type{Kind: Variant, Fields: []Field{{"a", nil}, {"b", listOf(str)}, {"c", prims[0x74]}}}),
		mk(&Type{Kind: Result, Ok: listOf(opt), Err: str}),
		listOf(mk(&Type{Kind: Flags, Names: []string{"r", "w", "x"}})),
		listOf(mk(&Type{Kind: Tuple})),
	}
	f.Add(uint8(0), uint32(0), []byte("\x10\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00"))
	f.Add(uint8(1), uint32(8), []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x40\x00\x00"))
	f.Add(uint8(0x86), uint32(0), []byte("\x00\x00\x00\x00\xff\xff\xff\xff"))
	mem := testMemory(f)
	zero := make([]byte, mem.Size())
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, kind uint8, ptr uint32, data []byte) {
		mem.Write(0, zero)
		mem.Write(0, data[:min(len(data), len(zero))])
		ty := types[int(kind&0x7f)%len(types)]
		c := &cx{ctx: context.Background(), mem: mem, utf16: kind&0x80 != 0, budget: budget{limit: limit}}
		r := catch(func() { c.load(ty, ptr%uint32(len(zero))) })
		switch r.(type) {
		case nil, *Trap, *ValueBudgetError:
		default:
			t.Fatalf("lifting %s: %v", ty, r)
		}
		if c.budget.spent > limit {
			t.Errorf("spent %d bytes under a budget of %d", c.budget.spent, limit)
		}
	})
}
