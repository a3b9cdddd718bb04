package plugins

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// wasmFuncExports returns the names of the functions a Wasm binary exports,
// read from its export section without compiling anything. The loader
// needs them before the module is loaded, because the instance model (see
// [Plugin.Instances]) fixes the size of the sandbox's pool at load. It
// reads untrusted bytes: every length is checked against what is left.
func wasmFuncExports(wasm []byte) ([]string, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("not a Wasm binary")
	}
	if sandbox.IsComponent(wasm) {
		// A component answers the v2 plugin ABI's tool exports (see
		// sandbox/component); it is stateful, as it never exports
		// mcphost_stateless.
		return []string{abi.ExportCallTool, abi.ExportListTools}, nil
	}
	r := wasmReader{b: wasm[8:]}
	for len(r.b) > 0 {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		body, err := r.take(size)
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, err)
		}
		if id != 7 { // the export section
			continue
		}
		return readExports(wasmReader{b: body})
	}
	return nil, nil
}

func readExports(r wasmReader) ([]string, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var names []string
	for i := uint32(0); i < n; i++ {
		l, err := r.u32()
		if err != nil {
			return nil, err
		}
		name, err := r.take(l)
		if err != nil {
			return nil, fmt.Errorf("export %d: %w", i, err)
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		if _, err := r.u32(); err != nil { // the index
			return nil, err
		}
		if kind == 0 { // a function
			names = append(names, string(name))
		}
	}
	return names, nil
}

type wasmReader struct{ b []byte }

var errTruncated = errors.New("truncated Wasm binary")

func (r *wasmReader) byte() (byte, error) {
	if len(r.b) == 0 {
		return 0, errTruncated
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

func (r *wasmReader) u32() (uint32, error) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n > 5 || v > 1<<32-1 {
		return 0, errors.New("bad LEB128 integer in Wasm binary")
	}
	r.b = r.b[n:]
	return uint32(v), nil
}

func (r *wasmReader) take(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)) {
		return nil, errTruncated
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b, nil
}
