package looppoll

import (
	"context"
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
	ctx := context.Background()
	// The interpreter: validation is shared with the compiler, and
	// compiling thousands of inputs to native code would be slow.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, _, err := Instrument(wasm)
		cm, cerr := rt.CompileModule(ctx, wasm)
		if cerr != nil {
			return
		}
		cm.Close(ctx)
		if err != nil {
			return // refusing is always allowed; falling back is the caller's job
		}
		cm, cerr = rt.CompileModule(ctx, out)
		if cerr != nil {
			t.Fatalf("input compiles, output does not: %v", cerr)
		}
		cm.Close(ctx)
	})
}
