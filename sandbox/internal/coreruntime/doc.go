// Package coreruntime is the seam between the sandbox's Engine and a runtime
// of Extism core modules: what the Engine asks of one ([Backend], [Guest])
// and what it gives one ([Host]). The Engine runs every module on its
// own native kernel; tests choose another runtime for a Load with [With]:
// the Extism Go SDK, the reference the kernel is checked against
// (sandbox/internal/oracle), or the native kernel stopped by wazero's
// close-on-done instead of the loop poll. The module is then served by
// the same pool, limits and fault sorting, so what differs is the runtime
// alone.
//
// It is not API: only packages under sandbox/ can import it, and it
// imports nothing of the sandbox root (TestImportDirection).
package coreruntime
