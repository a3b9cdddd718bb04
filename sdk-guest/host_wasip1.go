//go:build wasip1

package guest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
)

// The Extism kernel (extism:host/env). Offsets are into the kernel's
// memory, not the guest's; bulk transfers use the 64-bit load and store
// functions, which the host implements directly.

//go:wasmimport extism:host/env input_length
func extismInputLength() uint64

//go:wasmimport extism:host/env input_offset
func extismInputOffset() uint64

//go:wasmimport extism:host/env input_load_u64
func extismInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func extismInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func extismAlloc(n uint64) uint64

//go:wasmimport extism:host/env free
func extismFree(offset uint64)

//go:wasmimport extism:host/env length
func extismLength(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func extismLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env load_u64
func extismLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env store_u8
func extismStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env store_u64
func extismStoreU64(offset uint64, v uint64)

//go:wasmimport extism:host/env output_set
func extismOutputSet(offset, length uint64)

//go:wasmimport extism:host/env error_set
func extismErrorSet(offset uint64)

//go:wasmimport extism:host/env config_get
func extismConfigGet(offset uint64) uint64

//go:wasmimport extism:host/env log_debug
func extismLogDebug(offset uint64)

//go:wasmimport extism:host/env log_info
func extismLogInfo(offset uint64)

//go:wasmimport extism:host/env log_warn
func extismLogWarn(offset uint64)

//go:wasmimport extism:host/env log_error
func extismLogError(offset uint64)

// mcphost's host functions (extism:host/user, abi.HostNamespace), with
// hyper-mcp's signatures (see abi.HostFuncs): a payload is one i64 offset
// of a JSON block, a reply one i64 offset of a JSON block. The host frees
// the payload; the guest frees the reply.

//go:wasmimport extism:host/user notify_logging_message
func hostNotifyLoggingMessage(payload uint64)

//go:wasmimport extism:host/user notify_progress
func hostNotifyProgress(payload uint64)

//go:wasmimport extism:host/user create_message
func hostCreateMessage(payload uint64) uint64

//go:wasmimport extism:host/user create_elicitation
func hostCreateElicitation(payload uint64) uint64

//go:wasmimport extism:host/user list_roots
func hostListRoots() uint64

//go:wasmimport extism:host/user notify_tool_list_changed
func hostNotifyToolListChanged()

//go:wasmimport extism:host/user notify_prompt_list_changed
func hostNotifyPromptListChanged()

//go:wasmimport extism:host/user notify_resource_list_changed
func hostNotifyResourceListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func hostNotifyResourceUpdated(payload uint64)

//go:wasmimport extism:host/user notify_url_elicitation_completed
func hostNotifyURLElicitationCompleted(payload uint64)

// hostHTTP is imported only by a plugin that calls guest.HTTP.
//
//go:wasmimport extism:host/user http
func hostHTTP(payload uint64) uint64

// errKernelMemory is returned when the Extism kernel cannot allocate: its
// alloc returns 0 instead of failing.
var errKernelMemory = errors.New("extism kernel memory exhausted")

func platformHost() HostFuncs { return extismHost{} }

// mcphost's call status (abi.CallNamespace). Hosts without it give a
// stand-in that answers 0.

//go:wasmimport mcphost:host/call cancelled
func hostCancelled() int32

// Cancelled asks the host whether the call being served was cancelled.
func (extismHost) Cancelled() bool { return hostCancelled() == 1 }

// mcphost's bulk copies (abi.IONamespace): one host call instead of one
// per 8 bytes. Hosts without them answer "not supported".

//go:wasmimport mcphost:host/io read
func ioRead(block uint64, dst unsafe.Pointer, n uint32) int32

//go:wasmimport mcphost:host/io write
func ioWrite(src unsafe.Pointer, n uint32) uint64

//go:wasmimport mcphost:host/io input
func ioInput(dst unsafe.Pointer, n uint32) int64

//go:wasmimport mcphost:host/io output
func ioOutput(src unsafe.Pointer, n uint32) int32

// bulk is 1 when the host implements abi.IONamespace, -1 when it does not,
// 0 before the first question.
var bulk int8

func hasBulk() bool {
	if bulk == 0 {
		bulk = 1
		if ioRead(0, nil, 0) < 0 {
			bulk = -1
		}
	}
	return bulk > 0
}

// readInput copies the call's input out of the kernel.
func readInput() []byte { return readInputTo(nil) }

// readInputTo copies the call's input out of the kernel into buf, grown
// when it is too small: with the bulk copies, one host call when it fits.
func readInputTo(buf []byte) []byte {
	if hasBulk() && cap(buf) <= math.MaxUint32 {
		buf = buf[:cap(buf)]
		n := ioInput(unsafe.Pointer(unsafe.SliceData(buf)), uint32(len(buf)))
		if n >= 0 && n <= math.MaxUint32 {
			if int64(len(buf)) >= n {
				return buf[:n]
			}
			buf = make([]byte, n)
			ioInput(unsafe.Pointer(&buf[0]), uint32(n))
			return buf
		}
	}
	n := extismInputLength()
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if n > 0 && n <= math.MaxUint32 && hasBulk() {
		ioRead(extismInputOffset(), unsafe.Pointer(&buf[0]), uint32(n))
		return buf
	}
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], extismInputLoadU64(i))
	}
	for ; i < n; i++ {
		buf[i] = byte(extismInputLoadU8(i))
	}
	return buf
}

// readBlock copies a kernel block out and frees it.
func readBlock(off uint64) []byte {
	n := extismLength(off)
	buf := make([]byte, n)
	if n > 0 && n <= math.MaxUint32 && hasBulk() {
		ioRead(off, unsafe.Pointer(&buf[0]), uint32(n))
		extismFree(off)
		return buf
	}
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], extismLoadU64(off+i))
	}
	for ; i < n; i++ {
		buf[i] = byte(extismLoadU8(off + i))
	}
	extismFree(off)
	return buf
}

// writeBlock copies b into a new kernel block. b must not be empty.
func writeBlock(b []byte) (uint64, error) {
	if len(b) <= math.MaxUint32 && hasBulk() {
		off := ioWrite(unsafe.Pointer(&b[0]), uint32(len(b)))
		if off == 0 {
			return 0, errKernelMemory
		}
		return off, nil
	}
	off := extismAlloc(uint64(len(b)))
	if off == 0 {
		return 0, errKernelMemory
	}
	n := uint64(len(b))
	var i uint64
	for ; i+8 <= n; i += 8 {
		extismStoreU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		extismStoreU8(off+i, uint32(b[i]))
	}
	return off, nil
}

// run is the body of every byte-level export.
func run(export string) int32 {
	out, err := Dispatch(export, readInput())
	if err != nil {
		setError(err.Error())
		return 1
	}
	return setOutput(export, out)
}

// The buffers of the frame export (abi.ExportCallToolMembers), kept from
// call to call up to keptBuffer bytes each: a guest whose calls carry
// megabytes should not hold that much between them.
var frameIn, frameOut []byte

const keptBuffer = 1 << 20

// runFrame is the body of the frame export.
func runFrame() int32 {
	in := readInputTo(frameIn)
	out, err := std.callFrame(in, frameOut)
	if cap(in) <= keptBuffer {
		frameIn = in[:0]
	}
	if err != nil {
		setError(err.Error())
		return 1
	}
	rc := setOutput(abi.ExportCallTool, out) // copied into the kernel
	if cap(out) <= keptBuffer {
		frameOut = out[:0]
	}
	return rc
}

// setOutput sets out as the export's output (return 0), or reports why it
// could not (return 1).
func setOutput(export string, out []byte) int32 {
	if len(out) == 0 {
		extismOutputSet(0, 0)
		return 0
	}
	if len(out) <= math.MaxUint32 && hasBulk() {
		switch ioOutput(unsafe.Pointer(&out[0]), uint32(len(out))) {
		case 0:
			return 0
		case 1:
			setError(fmt.Sprintf("%s: output of %d bytes: %v", export, len(out), errKernelMemory))
			return 1
		} // -1: not supported
	}
	off, err := writeBlock(out)
	if err != nil {
		setError(fmt.Sprintf("%s: output of %d bytes: %v", export, len(out), err))
		return 1
	}
	extismOutputSet(off, uint64(len(out)))
	return 0
}

// setError reports msg through error_set. When even that cannot be
// allocated the export's non-zero return code is all the host gets.
func setError(msg string) {
	if msg == "" {
		msg = "error"
	}
	if off, err := writeBlock([]byte(msg)); err == nil {
		extismErrorSet(off)
	}
}

type extismHost struct{}

func (extismHost) Call(name string, payload []byte) ([]byte, error) {
	var off uint64
	if len(payload) > 0 {
		var err error
		if off, err = writeBlock(payload); err != nil {
			return nil, err
		}
	}
	var ret uint64
	switch name {
	case abi.HostLog:
		hostNotifyLoggingMessage(off)
	case abi.HostProgress:
		hostNotifyProgress(off)
	case abi.HostSample:
		ret = hostCreateMessage(off)
	case abi.HostElicit:
		ret = hostCreateElicitation(off)
	case abi.HostListRoots:
		ret = hostListRoots()
	case abi.HostToolListChanged:
		hostNotifyToolListChanged()
	case abi.HostPromptListChanged:
		hostNotifyPromptListChanged()
	case abi.HostResourceListChanged:
		hostNotifyResourceListChanged()
	case abi.HostResourceUpdated:
		hostNotifyResourceUpdated(off)
	case abi.HostURLElicitComplete:
		hostNotifyURLElicitationCompleted(off)
	default:
		if off != 0 {
			extismFree(off)
		}
		return nil, fmt.Errorf("unknown host function %q", name)
	}
	if ret == 0 {
		return nil, nil
	}
	return readBlock(ret), nil
}

func (extismHost) Config(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	k, err := writeBlock([]byte(key))
	if err != nil {
		return "", false
	}
	v := extismConfigGet(k)
	extismFree(k) // config_get does not free the key
	if v == 0 {
		return "", false
	}
	return string(readBlock(v)), true
}

// HTTP goes through mcphost's http host function (abi.HostHTTP), not
// Extism's http_request, whose only way to fail is to trap the guest and
// lose its instance's state: a refusal comes back as an error here.
func (extismHost) HTTP(req *HTTPRequest) (*HTTPResponse, error) {
	payload, err := json.Marshal(abi.HTTPRequest{URL: req.URL, Method: req.Method, Headers: req.Header, Body: req.Body})
	if err != nil {
		return nil, err
	}
	off, err := writeBlock(payload)
	if err != nil {
		return nil, err
	}
	ret := hostHTTP(off) // the host frees the payload
	if ret == 0 {
		return nil, errors.New("host http: no reply (kernel memory exhausted?)")
	}
	var rep abi.HTTPReply
	if err := json.Unmarshal(readBlock(ret), &rep); err != nil {
		return nil, fmt.Errorf("host http: decode reply: %w", err)
	}
	if rep.Error != "" {
		return nil, &HostError{Func: abi.HostHTTP, Message: rep.Error, Refused: rep.Refused}
	}
	if rep.Headers == nil {
		rep.Headers = map[string]string{}
	}
	return &HTTPResponse{Status: rep.Status, Header: rep.Headers, Body: rep.Body}, nil
}

func (extismHost) Log(level Level, msg string) {
	if msg == "" {
		return
	}
	off, err := writeBlock([]byte(msg))
	if err != nil {
		return
	}
	switch level { // the host frees the block
	case LevelDebug:
		extismLogDebug(off)
	case LevelInfo, LevelNotice:
		extismLogInfo(off)
	case LevelWarning:
		extismLogWarn(off)
	default:
		extismLogError(off)
	}
}
