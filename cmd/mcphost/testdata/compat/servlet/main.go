//go:build wasip1

// Command servlet is an mcp.run servlet (hyper-mcp's v1 ABI) written
// without mcphost's SDK: describe must get an empty input, call must get
// {"params":{"name","arguments"}} and nothing else.
package main

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/internal/pdk"
)

func main() {}

//go:wasmexport describe
func describe() int32 {
	if in := pdk.Input(); len(in) != 0 {
		return pdk.Fail(fmt.Sprintf("describe takes no input, got %q", in))
	}
	pdk.Output([]byte(`{"tools":[{"name":"greet","description":"greets","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]}`))
	return 0
}

//go:wasmexport call
func call() int32 {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		return pdk.Fail(err.Error())
	}
	if len(in) != 1 || in["params"] == nil {
		return pdk.Fail(fmt.Sprintf("want exactly {\"params\":…}, got %d members", len(in)))
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Name string `json:"name"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(in["params"], &p); err != nil {
		return pdk.Fail(err.Error())
	}
	if p.Name != "greet" {
		return pdk.Fail("unknown tool " + p.Name)
	}
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": "hello " + p.Arguments.Name}}})
	pdk.Output(out)
	return 0
}
