package main

import (
	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	_ "github.com/mcphost/mcphost/sdk-guest/stateless"
)

// EchoIn is the echo tool's input.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

func main() {}

func init() {
	guest.AddTool(guest.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the given text unchanged.",
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, echo)
}

// echo returns the Context's own result (ctx.TextResult), which costs no
// allocation: the text goes back as it came.
func echo(ctx *guest.Context, in EchoIn) (*guest.Result, error) {
	return ctx.TextResult(in.Text), nil
}
