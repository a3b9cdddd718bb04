package looppoll

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/internal/wasmgen"
)

// FuzzInstrument: Instrument never panics, and whenever wazero compiles
// the input and Instrument accepts it, wazero compiles the output too.
func FuzzInstrument(f *testing.F) {
	f.Add(rich())
	f.Add(spin(true))
	f.Add(spin(false))
	f.Add(envModule())
	f.Add(withCode([]byte{0x03, 0x40, 0x03, 0x40, 0x0b, 0x0b}))
	f.Add(withCode([]byte{0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 11, 0}))
	f.Add(wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hi"}, wasmgen.Func{Name: "t", Trap: true}, wasmgen.Func{Name: "s", Spin: true}))
	f.Add(wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hi"}, wasmgen.Func{Start: true, Spin: true}))
	ctx := context.Background()
	// The interpreter: validation is shared with the compiler, and
	// compiling thousands of inputs to native code would be slow.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, _, err := Instrument(wasm)
		if err != nil || !plausible(wasm) {
			return // refusing is always allowed; falling back is the caller's job
		}
		cm, cerr := rt.CompileModule(ctx, wasm)
		if cerr != nil {
			return
		}
		cm.Close(ctx)
		cm, cerr = rt.CompileModule(ctx, out)
		if cerr != nil {
			t.Fatalf("input compiles, output does not: %v", cerr)
		}
		cm.Close(ctx)
	})
}

// plausible reports whether wasm declares no vector obviously longer than
// the module. wazero allocates a vector's entries before reading them, so
// an input of a few bytes declaring 100 million exports or element indices
// takes seconds and gigabytes to refuse, and the fuzzer then reports its
// worker as hung: the oracle, not the rewriter. Top-level counts are
// checked exactly; inside import, export, element and data sections, where
// vectors nest, any LEB128 at any offset decoding to more than both 64 Ki
// and the module's size counts as such a declaration (data bytes that
// happen to decode so only cost the oracle a case). Such a module never
// compiles anyway.
func plausible(wasm []byte) bool {
	r := reader{b: wasm, pos: 8}
	for !r.done() {
		id := r.byte()
		size := r.u32()
		if r.err != nil || uint64(size) > uint64(len(wasm)-r.pos) {
			return false
		}
		sec := wasm[r.pos : r.pos+int(size)]
		if id != secCustom && id != secStart && id != secDataCount {
			body := reader{b: sec}
			if n := body.u32(); body.err != nil || uint64(n) > uint64(size) {
				return false
			}
		}
		if id == secImport || id == secExport || id == secElement || id == secData {
			for i := range sec {
				v, n := binary.Uvarint(sec[i:min(i+5, len(sec))])
				if n > 0 && v >= 1<<16 && v > uint64(len(wasm)) {
					return false
				}
			}
		}
		r.pos += int(size)
	}
	return true
}
