package sandbox

import "github.com/mcphost/mcphost/internal/wasmbin"

// CustomSection returns the body of wasm's custom section called name
// (after its name); found is false when there is none. It fails when the
// binary's sections do not read or two sections have the name. The bytes
// are wasm's, untrusted: the caller bounds and validates them.
func CustomSection(wasm []byte, name string) (body []byte, found bool, err error) {
	return wasmbin.CustomSection(wasm, name)
}

// WithCustomSection returns a copy of wasm whose custom section called
// name holds body (any such section before is dropped; the new one goes
// last). Runtimes ignore custom sections: the code does not change.
func WithCustomSection(wasm []byte, name string, body []byte) ([]byte, error) {
	return wasmbin.SetCustomSection(wasm, name, body)
}
