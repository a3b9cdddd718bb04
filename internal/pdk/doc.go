// Package pdk is the Extism kernel and mcphost's host functions (with
// hyper-mcp's signatures) imported by hand, the way a foreign PDK (Rust,
// Zig, TinyGo) binds them: raw //go:wasmimport declarations and nothing
// from mcphost's guest SDK. The test guests build on it: the sandbox's
// testguest, which probes the kernel function by function, and the
// compatibility guests of cmd/mcphost, which meet mcphost exactly as
// hyper-mcp and mcp.run plugins do.
//
// It builds for wasip1 only; elsewhere the package is empty. Go links a
// guest's imports from the functions it calls, so a guest imports what it
// uses and no more.
package pdk
