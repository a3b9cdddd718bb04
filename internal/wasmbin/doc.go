// Package wasmbin reads the WebAssembly binary format from untrusted
// bytes: the header that tells a core module from a component, the
// sections (framed alike in both), a core module's exports, custom
// sections by name, and the LEB128 integers all of it is written in. It
// is the one reader of Wasm binaries: sandbox's format check,
// sandbox/internal/component's decoder and sandbox/internal/looppoll's rewriter read
// through it, and plugins asks sandbox rather than reading bytes itself.
// It rewrites two things: [MergeData] coalesces a core module's data
// segments before it is compiled, and [SetCustomSection] writes a custom
// section (plugins' mcphost:lists) that [CustomSection] reads back.
//
// Every function fails with an error, never a panic or a read past the
// end, whatever the bytes; FuzzRead holds it to that, FuzzMergeData
// holds MergeData to writing the memory the module wrote, and
// FuzzCustomSection holds SetCustomSection to writing what CustomSection
// reads.
package wasmbin
