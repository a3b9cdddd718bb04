package systest

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins"
)

// NativeEcho implements the echo plugin's ABI in Go, its one tool
// described as desc.
func NativeEcho(desc string) plugins.Module {
	tools, _ := json.Marshal(abi.ListToolsResult{Tools: []abi.Tool{{
		Name: "echo", Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
	}}})
	return plugins.NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) { return tools, nil },
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var env struct {
				Request struct {
					Arguments struct {
						Text string `json:"text"`
					} `json:"arguments"`
				} `json:"request"`
			}
			if err := json.Unmarshal(in, &env); err != nil {
				return nil, err
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{abi.TextContent(env.Request.Arguments.Text)}})
		},
	})
}
