//go:build wasip1

// Package pdk is the Extism kernel and hyper-mcp's host functions imported
// by hand, the way a foreign PDK (Rust, Zig, TinyGo) binds them: raw
// //go:wasmimport declarations and nothing from mcphost. The compatibility
// guests build on it so that they meet mcphost exactly as hyper-mcp and
// mcp.run plugins do.
package pdk

import "encoding/binary"

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

//go:wasmimport extism:host/env length
func length(offset uint64) uint64

//go:wasmimport extism:host/env load_u64
func loadU64(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func loadU8(offset uint64) uint32

//go:wasmimport extism:host/env store_u64
func storeU64(offset, v uint64)

//go:wasmimport extism:host/env store_u8
func storeU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset, length uint64)

//go:wasmimport extism:host/env error_set
func errorSet(offset uint64)

//go:wasmimport extism:host/env config_get
func configGet(offset uint64) uint64

//go:wasmimport extism:host/env var_get
func varGet(offset uint64) uint64

//go:wasmimport extism:host/env var_set
func varSet(name, value uint64)

//go:wasmimport extism:host/env http_request
func httpRequest(req, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func httpStatusCode() int32

//go:wasmimport extism:host/env log_info
func logInfo(offset uint64)

//go:wasmimport extism:host/env log_warn
func logWarn(offset uint64)

//go:wasmimport extism:host/env log_error
func logError(offset uint64)

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

//go:wasmimport extism:host/user get_keyring_secret
func getKeyringSecret(entry uint64) uint64

// Input is the call's input.
func Input() []byte {
	n := inputLength()
	buf := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], inputLoadU64(i))
	}
	for ; i < n; i++ {
		buf[i] = byte(inputLoadU8(i))
	}
	return buf
}

func store(b []byte) uint64 {
	off := alloc(uint64(len(b)))
	n := uint64(len(b))
	var i uint64
	for ; i+8 <= n; i += 8 {
		storeU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		storeU8(off+i, uint32(b[i]))
	}
	return off
}

func load(off uint64) []byte {
	if off == 0 {
		return nil
	}
	n := length(off)
	buf := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], loadU64(off+i))
	}
	for ; i < n; i++ {
		buf[i] = byte(loadU8(off + i))
	}
	return buf
}

// Output sets the call's output.
func Output(b []byte) { outputSet(store(b), uint64(len(b))) }

// Fail sets the call's error, as a PDK's error return does.
func Fail(msg string) int32 {
	errorSet(store([]byte(msg)))
	return 1
}

// Config reads an Extism config key.
func Config(key string) (string, bool) {
	off := configGet(store([]byte(key)))
	if off == 0 {
		return "", false
	}
	return string(load(off)), true
}

// Var reads an Extism var; SetVar writes one.
func Var(name string) []byte       { return load(varGet(store([]byte(name)))) }
func SetVar(name string, v []byte) { varSet(store([]byte(name)), store(v)) }

// HTTP sends req (Extism's {"url","method","headers"}) and returns the
// status and body.
func HTTP(req, body []byte) (int32, []byte) {
	var b uint64
	if body != nil {
		b = store(body)
	}
	out := load(httpRequest(store(req), b))
	return httpStatusCode(), out
}

// Log logs at level "info", "warn" or "error".
func Log(level, msg string) {
	off := store([]byte(msg))
	switch level {
	case "warn":
		logWarn(off)
	case "error":
		logError(off)
	default:
		logInfo(off)
	}
}

// ToolListChanged is hyper-mcp's notify_tool_list_changed.
func ToolListChanged() { notifyToolListChanged() }

// Secret is hyper-mcp's get_keyring_secret.
func Secret(entryJSON []byte) []byte { return load(getKeyringSecret(store(entryJSON))) }
