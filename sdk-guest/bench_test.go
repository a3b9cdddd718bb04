package guest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// useEcho gives b a registry with one echo tool of a flat argument type.
func useEcho(b *testing.B) {
	old := std
	std = newRegistry()
	b.Cleanup(func() { std = old })
	AddTool(Tool{Name: "echo", Description: "Echo."}, func(ctx *Context, in struct {
		Text string `json:"text"`
	}) (*Result, error) {
		return TextResult(in.Text), nil
	})
}

// BenchmarkDispatch measures the SDK's own cost per call (decode the
// envelope, decode typed arguments, run the handler, encode the result),
// natively; under Wasm the same code runs about 5-10x slower.
func BenchmarkDispatch(b *testing.B) {
	useEcho(b)
	input := []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":1,"_meta":{"progressToken":1}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Dispatch(abi.ExportCallTool, input); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallFrame is BenchmarkDispatch's call through the frame
// export (abi.ExportCallToolMembers), with the output buffer reused as the
// export reuses it: the allocations left are the handler's own (its
// string argument, its result).
func BenchmarkCallFrame(b *testing.B) {
	useEcho(b)
	frame := frameOf("echo", `{"text":"hello"}`, abi.Context{ID: []byte("1"), Meta: []byte(`{"progressToken":1}`)})
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = std.callFrame(frame, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDispatch3MB is the SDK's cost of echoing a 3 MB text: through
// Dispatch (the envelope's one pass, the big-string placeholders, the
// appended output) and through encoding/json alone (the envelope, the
// arguments and the result), with the ratio of the two. Natively the gap
// is what the scanner saves; compiled to Wasm, where encoding/json's
// per-byte calls cost far more, the same echo takes seconds without it.
func BenchmarkDispatch3MB(b *testing.B) {
	old := std
	std = newRegistry()
	defer func() { std = old }()
	type echoIn struct {
		Text string `json:"text"`
	}
	AddTool(Tool{Name: "echo", Description: "Echo."}, func(ctx *Context, in echoIn) (*Result, error) {
		return TextResult(in.Text), nil
	})
	text := strings.Repeat("x", 3<<20)
	input := []byte(`{"request":{"name":"echo","arguments":{"text":"` + text + `"}},"context":{"id":1}}`)
	var ns [2]float64
	b.Run("fastpath", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		for b.Loop() {
			if out, err := Dispatch(abi.ExportCallTool, input); err != nil || len(out) < len(text) {
				b.Fatal(err)
			}
		}
		ns[0] = float64(b.Elapsed()) / float64(b.N)
	})
	b.Run("encodingjson", func(b *testing.B) {
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		for b.Loop() {
			p, err := decodeInputSlow[abi.CallToolParams](&Context{}, input, true)
			if err != nil {
				b.Fatal(err)
			}
			var in echoIn
			if err := json.Unmarshal(p.Arguments, &in); err != nil {
				b.Fatal(err)
			}
			if out, err := json.Marshal(finish(TextResult(in.Text))); err != nil || len(out) < len(text) {
				b.Fatal(err)
			}
		}
		ns[1] = float64(b.Elapsed()) / float64(b.N)
		if ns[0] > 0 {
			b.ReportMetric(ns[1]/ns[0], "x-fastpath")
		}
	})
}
