package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/internal/wasmbin"
)

// FormatError is a file that is not a WebAssembly module mcphost can
// load: not Wasm at all, cut short, or a version it does not read. Its
// message says which in words, not in the decoder's; the loader, which
// knows where the bytes came from, sets File.
type FormatError struct {
	File   string // the file the bytes came from, when known
	Reason string // "not a WebAssembly module", "truncated or incomplete WebAssembly module", …
	Detail string // what gave it away
	Err    error  // the decoder's error, when there was one
}

func (e *FormatError) Error() string {
	msg := e.Reason
	if e.File != "" {
		msg = e.File + ": " + msg
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *FormatError) Unwrap() error { return e.Err }

// The reasons a FormatError gives.
const (
	reasonNotWasm   = "not a WebAssembly module"
	reasonTruncated = "truncated or incomplete WebAssembly module"
	reasonComponent = "a WebAssembly component of an unsupported binary version"
	reasonVersion   = "a WebAssembly binary of an unknown version"

	reasonMalformedComponent   = "a malformed WebAssembly component"
	reasonUnsupportedComponent = "a WebAssembly component using a part of the Component Model mcphost does not implement"
)

// checkFormat looks at the header of wasm, before the decoder does, and
// says what the bytes are when they are neither a core module nor a
// component of the binary version sandbox/internal/component reads.
func checkFormat(wasm []byte) error {
	magic := []byte(wasmbin.Magic)
	version, layer, ok := wasmbin.Header(wasm)
	switch {
	case len(wasm) == 0:
		return &FormatError{Reason: reasonNotWasm, Detail: "the file is empty"}
	case len(wasm) < len(magic) && bytes.HasPrefix(magic, wasm),
		len(wasm) < wasmbin.HeaderSize && bytes.HasPrefix(wasm, magic):
		return &FormatError{Reason: reasonTruncated, Detail: fmt.Sprintf("%d bytes, shorter than the 8-byte header", len(wasm))}
	case !ok:
		return &FormatError{Reason: reasonNotWasm, Detail: fmt.Sprintf("it starts with %s, not with the Wasm magic \\0asm", startOf(wasm))}
	}
	switch kind := wasmbin.KindOf(wasm); {
	case kind == wasmbin.Module || kind == wasmbin.Component:
		return nil
	case layer == 1:
		return &FormatError{Reason: reasonComponent, Detail: fmt.Sprintf("component binary version %#x; mcphost reads version %#x", version, wasmbin.ComponentVersion)}
	default:
		return &FormatError{Reason: reasonVersion, Detail: fmt.Sprintf("version %d, layer %d; mcphost loads version 1 core modules", version, layer)}
	}
}

// startOf quotes the first bytes of a file that is not Wasm, so that a
// text file shows what it is.
func startOf(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return fmt.Sprintf("%q", b)
}

// describeDecodeError turns the error of compiling wasm, whose header is
// a core module's, into a FormatError when the decoder ran out of bytes;
// other errors (a malformed or invalid module) keep wazero's words.
func describeDecodeError(wasm []byte, err error) error {
	if strings.Contains(err.Error(), "EOF") {
		return &FormatError{Reason: reasonTruncated, Detail: fmt.Sprintf("%d bytes; the decoder ran out: %v", len(wasm), err), Err: err}
	}
	return err
}

// FuncExports returns the names of the functions a Wasm binary exports,
// read from its header and export section without compiling anything:
// a core module's exported functions, and none for a component, which
// exports no Extism function (its Guest calls its WIT functions; it is
// stateful: it never exports abi.ExportStateless). It reads untrusted
// bytes; anything that is not a module or a component it can read is an
// error.
func FuncExports(wasm []byte) ([]string, error) {
	switch wasmbin.KindOf(wasm) {
	case wasmbin.NotWasm:
		return nil, errors.New("not a Wasm binary")
	case wasmbin.Component:
		return nil, nil
	}
	exports, err := wasmbin.Exports(wasm)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range exports {
		if e.Kind == 0 { // a function
			names = append(names, e.Name)
		}
	}
	return names, nil
}
