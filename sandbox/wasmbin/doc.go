// Package wasmbin reads the WebAssembly binary format from untrusted
// bytes: the header that tells a core module from a component, the
// sections (framed alike in both), a core module's exports, and the
// LEB128 integers all of it is written in. It is the one reader of Wasm
// binaries: sandbox's format check, sandbox/component's decoder and
// sandbox/looppoll's rewriter read through it, and plugins asks sandbox
// rather than reading bytes itself. It rewrites one thing: [MergeData]
// coalesces a core module's data segments before it is compiled.
//
// Every function fails with an error, never a panic or a read past the
// end, whatever the bytes; FuzzRead holds it to that, and FuzzMergeData
// holds MergeData to writing the memory the module wrote.
package wasmbin
