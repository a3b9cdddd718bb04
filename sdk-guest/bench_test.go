package guest

import (
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// BenchmarkDispatch measures the SDK's own cost per call (decode the
// envelope, decode typed arguments, run the handler, encode the result),
// natively; under Wasm the same code runs about 5-10x slower.
func BenchmarkDispatch(b *testing.B) {
	old := std
	std = newRegistry()
	defer func() { std = old }()
	AddTool(Tool{Name: "echo", Description: "Echo."}, func(ctx *Context, in struct {
		Text string `json:"text"`
	}) (*Result, error) {
		return TextResult(in.Text), nil
	})
	input := []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":1,"_meta":{"progressToken":1}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Dispatch(abi.ExportCallTool, input); err != nil {
			b.Fatal(err)
		}
	}
}
