package looppoll

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/internal/wasmgen"
)

// A few helpers to write modules by hand, WAT-like.

func u(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func vec(items ...[]byte) []byte { return cat(u(uint64(len(items))), cat(items...)) }

func str(s string) []byte { return cat(u(uint64(len(s))), []byte(s)) }

func sec(id byte, body []byte) []byte { return cat([]byte{id}, u(uint64(len(body))), body) }

func module(secs ...[]byte) []byte { return cat([]byte("\x00asm\x01\x00\x00\x00"), cat(secs...)) }

// body is a function body with the given local groups and code (without
// the final end).
func body(locals []byte, code ...[]byte) []byte {
	b := cat(locals, cat(code...), []byte{0x0b})
	return cat(u(uint64(len(b))), b)
}

const (
	i32 = 0x7f
	f32 = 0x7d
)

// rich uses what toolchains emit by default: imported memory and global,
// a table with call_indirect, nested loops, a loop with a type-index block
// type (multi-value), br_table, select t, reference instructions, bulk
// memory, saturating truncation, a passive data segment with data count,
// a start function and custom sections before, between and after. run
// returns 353.
func rich() []byte {
	f32c := make([]byte, 4)
	binary.LittleEndian.PutUint32(f32c, math.Float32bits(2.5))
	run := body(vec(cat(u(2), []byte{i32})), // locals 0 (sum), 1 (i)
		// for i := 0; i < 10; i++ { sum += f1(i) }, via call_indirect
		[]byte{0x02, 0x40, 0x03, 0x40},
		[]byte{0x20, 1, 0x41, 10, 0x4e, 0x0d, 1}, // i >= 10: br_if 1
		[]byte{0x03, 0x40, 0x0b},                 // an empty inner loop
		[]byte{0x20, 0, 0x20, 1, 0x41, 0, 0x11, 1, 0, 0x6a, 0x21, 0},
		[]byte{0x20, 1, 0x41, 1, 0x6a, 0x21, 1, 0x0c, 0},
		[]byte{0x0b, 0x0b},
		// memory.fill(0, 0x11, 16); memory.copy(16, 0, 16); sum += mem[31]
		[]byte{0x41, 0, 0x41, 0x11, 0x41, 16, 0xfc, 11, 0},
		[]byte{0x41, 16, 0x41, 0, 0x41, 16, 0xfc, 10, 0, 0},
		[]byte{0x20, 0, 0x41, 31, 0x2d, 0, 0, 0x6a, 0x21, 0},
		// memory.init of the passive segment, data.drop; sum += mem[40]-'a' (0)
		[]byte{0x41, 40, 0x41, 0, 0x41, 3, 0xfc, 8, 0, 0, 0xfc, 9, 0},
		[]byte{0x20, 0, 0x41, 40, 0x2d, 0, 0, 0x6a, 0x41, 'a', 0x6b, 0x21, 0},
		// sum += i32.trunc_sat_f32_s(2.5)
		[]byte{0x20, 0, 0x43}, f32c, []byte{0xfc, 0, 0x6a, 0x21, 0},
		// sum += defined global (7) + imported global (100)
		[]byte{0x20, 0, 0x23, 1, 0x6a, 0x23, 0, 0x6a, 0x21, 0},
		// sum += ref.is_null(ref.null func); ref.func 1; drop
		[]byte{0x20, 0, 0xd0, 0x70, 0xd1, 0x6a, 0x21, 0, 0xd2, 1, 0x1a},
		// sum += select(i32)(1, 2, 0)
		[]byte{0x20, 0, 0x41, 1, 0x41, 2, 0x41, 0, 0x1c, 1, i32, 0x6a, 0x21, 0},
		// sum += loop (type 1: i32 -> i32) 5 { +1 }
		[]byte{0x20, 0, 0x41, 5, 0x03, 1, 0x41, 1, 0x6a, 0x0b, 0x6a, 0x21, 0},
		// br_table, i64 and f64 constants, memory.size, sign extension
		[]byte{0x02, 0x40, 0x02, 0x40, 0x41, 1, 0x0e, 1, 0, 1, 0x0b, 0x0b},
		[]byte{0x42, 0x80, 0x01, 0x1a, 0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a},
		[]byte{0x3f, 0, 0x1a, 0x41, 0x7f, 0xc0, 0x1a},
		[]byte{0x20, 0}, // return sum
	)
	f1 := body(vec(), []byte{0x20, 0, 0x41, 1, 0x74}) // i << 1
	start := body(vec(), []byte{0x03, 0x40, 0x0b})    // a loop run at instantiation
	return module(
		sec(0, cat(str("before"), []byte{1, 2, 3})),
		sec(1, vec([]byte{0x60, 0, 1, i32}, []byte{0x60, 1, i32, 1, i32}, []byte{0x60, 0, 0})),
		sec(2, vec(
			cat(str("env"), str("mem"), []byte{0x02, 0x00, 1}),
			cat(str("env"), str("g"), []byte{0x03, i32, 0}),
		)),
		sec(3, vec([]byte{0}, []byte{1}, []byte{2})),
		sec(4, vec([]byte{0x70, 0x00, 1})),
		sec(0, str("between")),
		sec(6, vec([]byte{i32, 1, 0x41, 7, 0x0b})),
		sec(7, vec(cat(str("run"), []byte{0, 0}), cat(str("f1"), []byte{0, 1}))),
		sec(8, u(2)),
		sec(9, vec(cat([]byte{0, 0x41, 0, 0x0b}, vec([]byte{1})))),
		sec(12, u(1)),
		sec(10, vec(run, f1, start)),
		sec(11, vec(cat([]byte{1}, str("abc")))),
		sec(0, cat(str(".debug_info"), []byte{9, 9})),
	)
}

// spin exports spin, which loops forever, and has no other section than
// needed: the rewriter adds the global and export sections.
func spin(memory bool) []byte {
	secs := [][]byte{
		sec(1, vec([]byte{0x60, 0, 0})),
		sec(3, vec([]byte{0})),
	}
	if memory {
		secs = append(secs, sec(5, vec([]byte{0, 1})))
	}
	secs = append(secs,
		sec(7, vec(cat(str("spin"), []byte{0, 0}))),
		sec(10, vec(body(vec(), []byte{0x03, 0x40, 0x0c, 0, 0x0b}))))
	return module(secs...)
}

// withCode returns a one-function module with memory whose body is code.
func withCode(code ...[]byte) []byte {
	return module(
		sec(1, vec([]byte{0x60, 0, 0})),
		sec(3, vec([]byte{0})),
		sec(5, vec([]byte{0, 1})),
		sec(10, vec(body(vec(), code...))),
	)
}

func TestInstrument(t *testing.T) {
	hello := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hi"}, wasmgen.Func{Name: "trap", Trap: true})
	tests := []struct {
		name      string
		wasm      []byte
		loops     int
		wantErr   error // matched with errors.Is, or by type for the typed errors
		unsupport bool
		format    bool
	}{
		{name: "wasmgen", wasm: hello, loops: 1},
		{name: "rich", wasm: rich(), loops: 4},
		{name: "no global or export section", wasm: spin(true), loops: 1},
		{name: "no loops", wasm: withCode([]byte{0x01}), loops: 0},
		{name: "no memory", wasm: spin(false), wantErr: ErrNoMemory},
		{name: "no memory and no loops", wasm: module(sec(1, vec([]byte{0x60, 0, 0})), sec(3, vec([]byte{0})),
			sec(10, vec(body(vec(), []byte{0x01})))), loops: 0},
		{name: "reserved name taken", wasm: module(
			sec(1, vec([]byte{0x60, 0, 0})), sec(3, vec([]byte{0})), sec(5, vec([]byte{0, 1})),
			sec(6, vec([]byte{i32, 1, 0x41, 0, 0x0b})),
			sec(7, vec(cat(str(InterruptExport), []byte{3, 0}))),
			sec(10, vec(body(vec()))),
		), wantErr: ErrNameTaken},
		{name: "SIMD opcode", wasm: withCode([]byte{0xfd, 0x0c}, make([]byte, 16), []byte{0x1a}), unsupport: true},
		{name: "v128 local", wasm: module(
			sec(1, vec([]byte{0x60, 0, 0})), sec(3, vec([]byte{0})), sec(5, vec([]byte{0, 1})),
			sec(10, vec(body(vec(cat(u(1), []byte{0x7b}))))),
		), unsupport: true},
		{name: "threads opcode", wasm: withCode([]byte{0x41, 0, 0x41, 0, 0xfe, 0x00, 2, 0, 0x1a}), unsupport: true},
		{name: "GC opcode", wasm: withCode([]byte{0xfb, 0x00}), unsupport: true},
		{name: "try", wasm: withCode([]byte{0x06, 0x40, 0x0b}), unsupport: true},
		{name: "try_table", wasm: withCode([]byte{0x1f, 0x40, 0x00, 0x0b}), unsupport: true},
		{name: "return_call", wasm: withCode([]byte{0x12, 0}), unsupport: true},
		{name: "unknown 0xfc", wasm: withCode([]byte{0xfc, 18}), unsupport: true},
		{name: "multi-memory memarg", wasm: withCode([]byte{0x41, 0, 0x28, 0x42, 1, 0, 0x1a}), unsupport: true},
		{name: "tag section", wasm: module(sec(13, vec([]byte{0, 0}))), unsupport: true},
		{name: "memory64", wasm: module(sec(5, vec([]byte{0x04, 1}))), unsupport: true},
		{name: "empty", wasm: nil, format: true},
		{name: "bad magic", wasm: []byte("\x00wat\x01\x00\x00\x00"), format: true},
		{name: "version 2", wasm: []byte("\x00asm\x02\x00\x00\x00"), unsupport: true},
		{name: "truncated", wasm: hello[:len(hello)-3], format: true},
		{name: "section past the end", wasm: cat(module(), []byte{1, 100}), format: true},
		{name: "sections out of order", wasm: module(sec(3, vec()), sec(1, vec())), format: true},
		{name: "body without end", wasm: module(
			sec(1, vec([]byte{0x60, 0, 0})), sec(3, vec([]byte{0})), sec(5, vec([]byte{0, 1})),
			sec(10, vec(cat(u(2), []byte{0, 0x01}))),
		), format: true},
		{name: "overlong integer", wasm: withCode([]byte{0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a}), format: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := bytes.Clone(tc.wasm)
			out, st, err := Instrument(tc.wasm)
			if !bytes.Equal(tc.wasm, orig) {
				t.Fatal("Instrument modified its input")
			}
			var ue *UnsupportedError
			var fe *FormatError
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("got %v; want %v", err, tc.wantErr)
				}
				return
			case tc.unsupport:
				if !errors.As(err, &ue) {
					t.Fatalf("got %v (%T); want *UnsupportedError", err, err)
				}
				return
			case tc.format:
				if !errors.As(err, &fe) {
					t.Fatalf("got %v (%T); want *FormatError", err, err)
				}
				return
			case err != nil:
				t.Fatalf("got %v; want success", err)
			}
			if st.Loops != tc.loops {
				t.Errorf("loops: got %d; want %d", st.Loops, tc.loops)
			}
			compiles(t, out)
		})
	}
}

// compiles fails t unless wazero compiles wasm and it exports the two
// globals.
func compiles(t *testing.T, wasm []byte) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("instrumented module does not compile: %v", err)
	}
	if len(cm.ImportedFunctions()) > 0 || len(cm.ImportedMemories()) > 0 {
		return // rich and wasmgen's modules: TestRichRuns and the sandbox run them
	}
	mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatalf("instrumented module does not instantiate: %v", err)
	}
	for _, name := range []string{CounterExport, InterruptExport} {
		if g, ok := mod.ExportedGlobal(name).(api.MutableGlobal); !ok || g.Type() != api.ValueTypeI32 {
			t.Errorf("export %q: got %v; want a mutable i32 global", name, g)
		}
	}
}

// envModule provides what rich imports: env.mem (one page) and the
// immutable global env.g = 100.
func envModule() []byte {
	return module(
		sec(5, vec([]byte{0, 1})),
		sec(6, vec([]byte{i32, 0, 0x41, 0xe4, 0x00, 0x0b})),
		sec(7, vec(cat(str("mem"), []byte{2, 0}), cat(str("g"), []byte{3, 0}))),
	)
}

// TestRichRuns runs rich before and after instrumentation: same result,
// and the counter counted the loop iterations down.
func TestRichRuns(t *testing.T) {
	out, _, err := Instrument(rich())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		wasm        []byte
		wantCounter uint64 // after run: 11+10 loop headers, 1 loop (type 1), 1 in start
	}{{"original", rich(), 0}, {"instrumented", out, Interval - 23}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rt := wazero.NewRuntime(ctx)
			defer rt.Close(ctx)
			if _, err := rt.InstantiateWithConfig(ctx, envModule(), wazero.NewModuleConfig().WithName("env")); err != nil {
				t.Fatal(err)
			}
			mod, err := rt.Instantiate(ctx, tc.wasm)
			if err != nil {
				t.Fatal(err)
			}
			// The start function, moved out of instantiation, runs when
			// the host calls it.
			if f := mod.ExportedFunction(StartExport); f != nil {
				if _, err := f.Call(ctx); err != nil {
					t.Fatal(err)
				}
			} else if tc.wantCounter != 0 {
				t.Fatalf("instrumented module does not export %s", StartExport)
			}
			res, err := mod.ExportedFunction("run").Call(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := api.DecodeI32(res[0]); got != 353 {
				t.Errorf("run: got %d; want 353", got)
			}
			if tc.wantCounter == 0 {
				return
			}
			if got := mod.ExportedGlobal(CounterExport).Get(); got != tc.wantCounter {
				t.Errorf("counter: got %d; want %d", got, tc.wantCounter)
			}
			if got := mod.ExportedGlobal(InterruptExport).Get(); got != 0 {
				t.Errorf("interrupt: got %d; want 0", got)
			}
		})
	}
}
