//go:build wasip1

package main

import "encoding/binary"

// The Extism kernel (extism:host/env). Offsets are into kernel memory.

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
func extismConfigGet(offset uint64) uint64

//go:wasmimport extism:host/env http_request
func httpRequest(req, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func httpStatusCode() int32

//go:wasmimport extism:host/env log_info
func logInfo(offset uint64)

// mcphost's host functions (extism:host/user), with hyper-mcp's signatures.

//go:wasmimport extism:host/user notify_logging_message
func hostLog(uint64)

//go:wasmimport extism:host/user notify_progress
func hostProgress(uint64)

//go:wasmimport extism:host/user create_message
func hostCreateMessage(uint64) uint64

//go:wasmimport extism:host/user create_elicitation
func hostCreateElicitation(uint64) uint64

//go:wasmimport extism:host/user list_roots
func hostListRoots() uint64

//go:wasmimport extism:host/user notify_tool_list_changed
func hostToolListChanged()

//go:wasmimport extism:host/user notify_prompt_list_changed
func hostPromptListChanged()

//go:wasmimport extism:host/user notify_resource_list_changed
func hostResourceListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func hostResourceUpdated(uint64)

//go:wasmimport extism:host/user notify_url_elicitation_completed
func hostURLElicitationCompleted(uint64)

//go:wasmimport extism:host/user get_keyring_secret
func hostKeyringSecret(uint64) uint64

//go:wasmimport extism:host/user kv
func hostKV(uint64) uint64

//go:wasmimport extism:host/user http
func hostHTTP(uint64) uint64

func input() []byte {
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

// store copies b into a new kernel block.
func store(b []byte) uint64 {
	off := alloc(uint64(len(b)))
	if off == 0 && len(b) > 0 {
		panic("extism: kernel memory exhausted")
	}
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

// load copies the kernel block at off; 0 is no block.
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

func output(b []byte)     { outputSet(store(b), uint64(len(b))) }
func setError(msg string) { errorSet(store([]byte(msg))) }

func configGet(key string) (string, bool) {
	off := extismConfigGet(store([]byte(key)))
	if off == 0 {
		return "", false
	}
	return string(load(off)), true
}

//go:wasmimport extism:host/env free
func free(offset uint64)

//go:wasmimport extism:host/env length_unsafe
func lengthUnsafe(offset uint64) uint64

//go:wasmimport extism:host/env input_offset
func inputOffset() uint64

//go:wasmimport extism:host/env var_get
func varGet(offset uint64) uint64

//go:wasmimport extism:host/env var_set
func varSet(name, value uint64)

//go:wasmimport extism:host/env http_headers
func httpHeaders() uint64

//go:wasmimport extism:host/env error_get
func errorGet() uint64

//go:wasmimport extism:host/env output_length
func outputLength() uint64
