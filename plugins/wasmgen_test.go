package plugins

import "github.com/mcphost/mcphost/internal/wasmgen"

// wfunc is one export of a generated test module (see internal/wasmgen).
type wfunc struct {
	name   string
	output string // the export sets this as its output and returns 0
	trap   bool   // the export executes unreachable
	i32    *int32 // the export returns this (a plain i32 export)
	start  bool   // the module's start function (not exported)
	spin   bool   // loops forever
}

// wasmModule assembles a tiny Extism-ABI module exporting fns; it
// compiles in microseconds, even under -race.
func wasmModule(fns ...wfunc) []byte {
	out := make([]wasmgen.Func, len(fns))
	for i, f := range fns {
		out[i] = wasmgen.Func{Name: f.name, Output: f.output, Trap: f.trap, I32: f.i32, Start: f.start, Spin: f.spin}
	}
	return wasmgen.Module(out...)
}
