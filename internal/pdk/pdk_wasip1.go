package pdk

import "encoding/binary"

// The Extism kernel (extism:host/env). Offsets are into kernel memory.

//go:wasmimport extism:host/env input_length
func InputLength() uint64

//go:wasmimport extism:host/env input_offset
func InputOffset() uint64

//go:wasmimport extism:host/env input_load_u64
func InputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func InputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func Alloc(n uint64) uint64

//go:wasmimport extism:host/env free
func Free(offset uint64)

//go:wasmimport extism:host/env length
func Length(offset uint64) uint64

//go:wasmimport extism:host/env length_unsafe
func LengthUnsafe(offset uint64) uint64

//go:wasmimport extism:host/env load_u64
func LoadU64(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func LoadU8(offset uint64) uint32

//go:wasmimport extism:host/env store_u64
func StoreU64(offset, v uint64)

//go:wasmimport extism:host/env store_u8
func StoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func OutputSet(offset, length uint64)

//go:wasmimport extism:host/env output_length
func OutputLength() uint64

//go:wasmimport extism:host/env error_set
func ErrorSet(offset uint64)

//go:wasmimport extism:host/env error_get
func ErrorGet() uint64

//go:wasmimport extism:host/env config_get
func ConfigGet(offset uint64) uint64

//go:wasmimport extism:host/env var_get
func VarGet(offset uint64) uint64

//go:wasmimport extism:host/env var_set
func VarSet(name, value uint64)

//go:wasmimport extism:host/env http_request
func HTTPRequest(req, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func HTTPStatusCode() int32

//go:wasmimport extism:host/env log_info
func LogInfo(offset uint64)

//go:wasmimport extism:host/env log_warn
func LogWarn(offset uint64)

//go:wasmimport extism:host/env log_error
func LogError(offset uint64)

// mcphost's host functions (extism:host/user), with hyper-mcp's signatures.

//go:wasmimport extism:host/user notify_logging_message
func NotifyLoggingMessage(uint64)

//go:wasmimport extism:host/user notify_progress
func NotifyProgress(uint64)

//go:wasmimport extism:host/user create_message
func CreateMessage(uint64) uint64

//go:wasmimport extism:host/user create_elicitation
func CreateElicitation(uint64) uint64

//go:wasmimport extism:host/user list_roots
func ListRoots() uint64

//go:wasmimport extism:host/user notify_tool_list_changed
func NotifyToolListChanged()

//go:wasmimport extism:host/user notify_prompt_list_changed
func NotifyPromptListChanged()

//go:wasmimport extism:host/user notify_resource_list_changed
func NotifyResourceListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func NotifyResourceUpdated(uint64)

//go:wasmimport extism:host/user notify_url_elicitation_completed
func NotifyURLElicitationCompleted(uint64)

//go:wasmimport extism:host/user get_keyring_secret
func GetKeyringSecret(entry uint64) uint64

//go:wasmimport extism:host/user kv
func KV(uint64) uint64

// HostHTTP is mcphost's http host function (ABI version 2): a refusal is
// an error reply, not a trap.
//
//go:wasmimport extism:host/user http
func HostHTTP(uint64) uint64

// Input is the call's input.
func Input() []byte {
	n := InputLength()
	buf := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], InputLoadU64(i))
	}
	for ; i < n; i++ {
		buf[i] = byte(InputLoadU8(i))
	}
	return buf
}

// Store copies b into a new kernel block.
func Store(b []byte) uint64 {
	off := Alloc(uint64(len(b)))
	if off == 0 && len(b) > 0 {
		panic("extism: kernel memory exhausted")
	}
	n := uint64(len(b))
	var i uint64
	for ; i+8 <= n; i += 8 {
		StoreU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		StoreU8(off+i, uint32(b[i]))
	}
	return off
}

// Load copies the kernel block at off; 0 is no block.
func Load(off uint64) []byte {
	if off == 0 {
		return nil
	}
	n := Length(off)
	buf := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], LoadU64(off+i))
	}
	for ; i < n; i++ {
		buf[i] = byte(LoadU8(off + i))
	}
	return buf
}

// Output sets the call's output.
func Output(b []byte) { OutputSet(Store(b), uint64(len(b))) }

// Fail sets the call's error and returns 1, as a PDK's error return does.
func Fail(msg string) int32 {
	ErrorSet(Store([]byte(msg)))
	return 1
}

// Config reads an Extism config key.
func Config(key string) (string, bool) {
	off := ConfigGet(Store([]byte(key)))
	if off == 0 {
		return "", false
	}
	return string(Load(off)), true
}

// Var reads an Extism var; SetVar writes one.
func Var(name string) []byte       { return Load(VarGet(Store([]byte(name)))) }
func SetVar(name string, v []byte) { VarSet(Store([]byte(name)), Store(v)) }

// HTTP sends req (Extism's {"url","method","headers"}) and returns the
// status and body.
func HTTP(req, body []byte) (int32, []byte) {
	var b uint64
	if body != nil {
		b = Store(body)
	}
	out := Load(HTTPRequest(Store(req), b))
	return HTTPStatusCode(), out
}

// Log logs at level "info", "warn" or "error".
func Log(level, msg string) {
	off := Store([]byte(msg))
	switch level {
	case "warn":
		LogWarn(off)
	case "error":
		LogError(off)
	default:
		LogInfo(off)
	}
}

// Secret is hyper-mcp's get_keyring_secret.
func Secret(entryJSON []byte) []byte { return Load(GetKeyringSecret(Store(entryJSON))) }
