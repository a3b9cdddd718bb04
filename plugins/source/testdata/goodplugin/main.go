//go:build wasip1

// Command goodplugin is a minimal hyper-mcp v2 plugin written against the
// raw Extism kernel imports (no SDK), used by the plugins tests: it lists
// one tool, "echo", that returns its arguments as text, and reports
// mcphost's ABI version.
package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

//go:wasmimport extism:host/env store_u8
func storeU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset, n uint64)

//go:wasmimport extism:host/env error_set
func errorSet(offset uint64)

func input() []byte {
	n := inputLength()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(inputLoadU8(uint64(i)))
	}
	return b
}

func store(b []byte) uint64 {
	p := alloc(uint64(len(b)))
	for i, c := range b {
		storeU8(p+uint64(i), uint32(c))
	}
	return p
}

func output(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		errorSet(store([]byte(err.Error())))
		return 1
	}
	outputSet(store(b), uint64(len(b)))
	return 0
}

//go:wasmexport list_tools
func listTools() int32 {
	return output(abi.ListToolsResult{Tools: []abi.Tool{{
		Name:        "echo",
		Description: "Returns its arguments.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"msg":{"type":"string"}}}`),
	}}})
}

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Request abi.CallToolParams `json:"request"`
		Context abi.Context        `json:"context"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		errorSet(store([]byte(err.Error())))
		return 1
	}
	return output(abi.CallToolResult{Content: []abi.Content{
		abi.TextContent(in.Context.Plugin + ":" + in.Request.Name + ":" + string(in.Request.Arguments)),
	}})
}

//go:wasmexport mcphost_abi_version
func abiVersion() int32 { return abi.Version }

func main() {}
