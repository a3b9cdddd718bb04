// Package wasmgen assembles tiny Wasm modules for tests: Extism-ABI
// plugins whose exports return canned output through the Extism kernel,
// trap, or return an i32. They compile in microseconds, so Wasm-backed
// tests stay fast even under -race (a Go guest takes ~30 s to compile
// there). It is shared by the tests of plugins and cmd/mcphost and is not
// meant for anything else.
package wasmgen

import (
	"encoding/binary"

	"github.com/mcphost/mcphost/internal/wasmbin"
)

// Func is one export of a generated module: a function taking nothing and
// returning an i32.
type Func struct {
	Name   string
	Output string // the export sets this as its output and returns 0
	Trap   bool   // the export executes unreachable
	Spin   bool   // the export loops forever without calling the host
	I32    *int32 // the export returns this (a plain i32 export)
	// Counter: the export adds one to a count kept in the instance's
	// memory and outputs it (4 bytes, little-endian), so a test can tell
	// an instance that kept its state from a fresh one.
	Counter bool
	// Start makes the function the module's start function (run when the
	// module is instantiated) instead of an export: it takes and returns
	// nothing, and with Spin loops forever. At most one Func may set it.
	Start bool
	// UntilCancelled: the export loops asking mcphost's
	// mcphost:host/call cancelled until it says 1, then returns 0
	// without output: a guest that heeds a cancellation.
	UntilCancelled bool
	// Roots: the export calls extism:host/user list_roots once, drops
	// its reply and returns 0 without output: a guest that waits in a
	// host function and knows nothing of cancellation.
	Roots bool
}

func uleb(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func sleb(v int64) []byte { return wasmbin.AppendSleb(nil, v) }

func vec(items ...[]byte) []byte {
	b := uleb(uint64(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func wname(s string) []byte { return wasmbin.AppendName(nil, s) }

func wsection(id byte, body []byte) []byte { return wasmbin.AppendSection(nil, id, body) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

const (
	wI32 = 0x7f
	wI64 = 0x7e
)

// outputBytes is the body (after its locals, p i64 and i i32) that sets
// the n bytes of memory at offset as the output and returns 0.
func outputBytes(length, offset int) []byte {
	n := int64(length)
	return cat(
		[]byte{0x42}, sleb(n), []byte{0x10, 0, 0x21, 0}, // p = alloc(n)
		[]byte{0x02, 0x40, 0x03, 0x40},                        // block loop
		[]byte{0x20, 1, 0x41}, sleb(n), []byte{0x4f, 0x0d, 1}, // if i >= n: break
		[]byte{0x20, 0, 0x20, 1, 0xad, 0x7c},           // p + i
		[]byte{0x20, 1, 0x2d, 0}, uleb(uint64(offset)), // load8_u(offset + i)
		[]byte{0x10, 1}, // store_u8
		[]byte{0x20, 1, 0x41, 1, 0x6a, 0x21, 1, 0x0c, 0}, // i++; continue
		[]byte{0x0b, 0x0b},                              // end loop, end block
		[]byte{0x20, 0, 0x42}, sleb(n), []byte{0x10, 2}, // output_set(p, n)
		[]byte{0x41, 0, 0x0b}, // return 0
	)
}

// Module assembles a module importing alloc, store_u8 and output_set from
// extism:host/env and exporting fns.
func Module(fns ...Func) []byte {
	types := wsection(1, vec(
		[]byte{0x60, 1, wI64, 1, wI64}, // 0: alloc(i64) i64
		[]byte{0x60, 2, wI64, wI32, 0}, // 1: store_u8(i64, i32)
		[]byte{0x60, 2, wI64, wI64, 0}, // 2: output_set(i64, i64)
		[]byte{0x60, 0, 1, wI32},       // 3: export() i32, cancelled() i32
		[]byte{0x60, 0, 0},             // 4: start()
		[]byte{0x60, 0, 1, wI64},       // 5: list_roots() i64
	))
	imported := [][]byte{
		cat(wname("extism:host/env"), wname("alloc"), []byte{0, 0}),
		cat(wname("extism:host/env"), wname("store_u8"), []byte{0, 1}),
		cat(wname("extism:host/env"), wname("output_set"), []byte{0, 2}),
	}
	// The optional imports, when a Func needs them, follow the three.
	var cancelled, roots byte
	for _, f := range fns {
		if f.UntilCancelled && cancelled == 0 {
			cancelled = byte(len(imported))
			imported = append(imported, cat(wname("mcphost:host/call"), wname("cancelled"), []byte{0, 3}))
		}
		if f.Roots && roots == 0 {
			roots = byte(len(imported))
			imported = append(imported, cat(wname("extism:host/user"), wname("list_roots"), []byte{0, 5}))
		}
	}
	base := uint64(len(imported)) // the index of the first defined function
	imports := wsection(2, vec(imported...))
	var funcs, exports, bodies, data [][]byte
	var start []byte
	offset := 1024
	for i, f := range fns {
		var code []byte
		if f.Start {
			funcs = append(funcs, []byte{4})
			start = wsection(8, uleb(base+uint64(i)))
			code = cat(vec(), []byte{0x0b})
			if f.Spin {
				code = cat(vec(), []byte{0x03, 0x40, 0x0c, 0, 0x0b, 0x0b}) // loop br 0 end
			}
			bodies = append(bodies, append(uleb(uint64(len(code))), code...))
			continue
		}
		funcs = append(funcs, []byte{3})
		exports = append(exports, cat(wname(f.Name), []byte{0}, uleb(base+uint64(i))))
		switch {
		case f.Trap:
			code = cat(vec(), []byte{0x00, 0x0b})
		case f.Spin:
			code = cat(vec(), []byte{0x03, 0x40, 0x0c, 0, 0x0b, 0x41, 0, 0x0b}) // loop br 0 end; i32.const 0
		case f.UntilCancelled:
			code = cat(vec(), []byte{0x03, 0x40, 0x10, cancelled, 0x45, 0x0d, 0, 0x0b, 0x41, 0, 0x0b}) // loop: br_if 0 (cancelled() == 0) end; i32.const 0
		case f.Roots:
			code = cat(vec(), []byte{0x10, roots, 0x1a, 0x41, 0, 0x0b}) // drop list_roots(); i32.const 0
		case f.I32 != nil:
			code = cat(vec(), []byte{0x41}, sleb(int64(*f.I32)), []byte{0x0b})
		case f.Counter:
			at := sleb(int64(offset))
			code = cat(
				vec([]byte{1, wI64}, []byte{1, wI32}), // local 0: p, local 1: i
				[]byte{0x41}, at, []byte{0x41}, at,    // two copies of the count's address
				[]byte{0x28, 2, 0, 0x41, 1, 0x6a}, // i32.load + 1
				[]byte{0x36, 2, 0},                // i32.store
				outputBytes(4, offset),
			)
			offset += 4
		default:
			code = cat(
				vec([]byte{1, wI64}, []byte{1, wI32}), // local 0: p, local 1: i
				outputBytes(len(f.Output), offset),
			)
			data = append(data, cat([]byte{0, 0x41}, sleb(int64(offset)), []byte{0x0b}, wname(f.Output)))
			offset += len(f.Output)
		}
		bodies = append(bodies, append(uleb(uint64(len(code))), code...))
	}
	pages := uint64(offset/65536 + 1)
	return cat(
		[]byte(wasmbin.Magic), []byte{wasmbin.ModuleVersion, 0, 0, 0},
		types, imports,
		wsection(3, vec(funcs...)),
		wsection(5, vec(cat([]byte{0}, uleb(pages)))),
		wsection(7, vec(exports...)),
		start,
		wsection(10, vec(bodies...)),
		wsection(11, vec(data...)),
	)
}
