// Package looppoll rewrites a WebAssembly module so that a host can stop it
// cheaply: after every loop opcode it inserts a poll of two globals it adds
// to the module, which the host sets from another goroutine.
//
// It owns: parsing a module's sections, decoding every instruction of its
// code section, appending two mutable i32 globals (after the existing ones,
// so no index shifts) exported as [CounterExport] and [InterruptExport],
// inserting the poll, and re-encoding function body and section sizes. A
// start section is removed and its function exported as [StartExport]:
// run inside instantiation, it could loop before the host can reach the
// globals, so the host calls it itself, with the poll armed.
// Custom sections are kept byte for byte; the code offsets DWARF sections
// hold become stale.
//
// The poll after each loop header is
//
//	global.get $ctr; i32.const 1; i32.sub; global.set $ctr
//	global.get $ctr; i32.const 0; i32.le_s
//	if
//	  i32.const Interval; global.set $ctr
//	  i32.const 0; memory.grow 0; drop
//	  global.get $intr; if unreachable end
//	end
//
// so a host that sets $intr to 1 and $ctr to 0 makes the guest trap at its
// next loop header, and every [Interval] iterations the guest executes
// memory.grow 0, which wazero serves in Go: a guest that loops without
// calling the host still reaches a point where the Go runtime can stop the
// world for a garbage collection.
//
// It fails closed: an opcode or section it does not know (SIMD, threads,
// exceptions, GC, tail calls, memory64, multiple memories, …) is an
// [*UnsupportedError], a malformed module a [*FormatError], a module with
// loops and no memory [ErrNoMemory] (one without loops gets the globals and
// no poll), and a module already exporting one of the reserved names
// [ErrNameTaken]. It does not validate what it copies (types, indices,
// stack shapes); the runtime that compiles the output does. It knows nothing
// about wazero, Extism or timeouts, and uses only the standard library.
package looppoll
