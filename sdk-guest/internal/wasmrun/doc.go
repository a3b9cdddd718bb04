// Package wasmrun builds Go plugins for wasip1 and runs them under the
// Extism Go SDK, with recording fakes of mcphost's host functions. It
// exists so the SDK's Wasm glue (the exports, the kernel memory
// transfers, the host-function calls) is tested for real; it is test
// support, not a host.
package wasmrun
