package plugins

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// BenchmarkRegistryAcquire measures taking and releasing the current
// generation, from all Ps at once (every request does this once).
func BenchmarkRegistryAcquire(b *testing.B) {
	r := NewRegistry()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, release := r.Acquire()
			release()
		}
	})
}

// BenchmarkCallToolNative measures what plugins adds to a tool call: the
// envelope, the native handler, and the output shape check.
func BenchmarkCallToolNative(b *testing.B) {
	for _, tc := range []struct{ name, def, out string }{
		{"plain", tool("echo"), `{"content":[{"type":"text","text":"ok"}]}`},
		// With an outputSchema, structuredContent is checked: the guest's
		// one pass over the result found it (sandbox.ToolResult).
		{"outputSchema", `{"name":"echo","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}`,
			`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			m := NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
				abi.ExportListTools: list("tools", []string{tc.def}),
				abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
					return []byte(tc.out), nil
				},
			})
			g := build(b, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", m))
			defer g.Close(ctx)
			tl := g.Tool("p_echo")
			args := json.RawMessage(`{"msg":"hello"}`)
			cc := abi.Context{ID: json.RawMessage(`1`)}
			b.ReportAllocs()
			for b.Loop() {
				if out, err := tl.Run(ctx, nil, args, cc); err != nil || len(out) != len(tc.out) {
					b.Fatalf("got %s, %v", out, err)
				}
			}
		})
	}
}

func BenchmarkValidateArguments(b *testing.B) {
	m := NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: list("tools", []string{`{"name":"t","inputSchema":{"type":"object",
			"properties":{"msg":{"type":"string","maxLength":100},"n":{"type":"integer"}},"required":["msg"]}}`}),
	})
	g := build(b, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", m))
	defer g.Close(context.Background())
	tl := g.Tool("p_t")
	args := json.RawMessage(`{"msg":"hello","n":3}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := tl.validateArguments(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatchTemplate(b *testing.B) {
	g := &Generation{}
	for _, s := range []string{"file:///{+path}", "repo://{owner}/{repo}/issues/{n}", "users://{id}/profile"} {
		tpl, err := parseURITemplate(s)
		if err != nil {
			b.Fatal(err)
		}
		g.Templates = append(g.Templates, &Template{tpl: tpl})
	}
	b.ReportAllocs()
	for b.Loop() {
		if t, _ := g.MatchTemplate("repo://golang/go/issues/12345"); t == nil {
			b.Fatal("no match")
		}
	}
}

// BenchmarkValidateStructured checks a C-kit tool's structuredContent
// against its outputSchema (measure of the kit's template), as every
// call of such a tool does: through the one-pass check, and through the
// general validator alone, with the ratio of the two.
func BenchmarkValidateStructured(b *testing.B) {
	m := NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: list("tools", []string{`{"name":"measure","inputSchema":{"type":"object",
			"properties":{"text":{"type":"string"}},"required":["text"]},
			"outputSchema":{"type":"object","properties":{"bytes":{"type":"integer"},"words":{"type":"integer"},
			"lines":{"type":"integer"}},"required":["bytes","words","lines"]}}`}),
	})
	g := build(b, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", m))
	defer g.Close(context.Background())
	flat := g.Tool("p_measure")
	if flat.outFlat == nil {
		b.Fatal("outputSchema not compiled to the one-pass form")
	}
	general := *flat
	general.outFlat = nil
	out := json.RawMessage(`{"bytes":11,"words":2,"lines":1}`)
	var ns [2]float64
	for i, tl := range []*Tool{flat, &general} {
		b.Run([]string{"onepass", "jsonschema"}[i], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := tl.validateStructured(out); err != nil {
					b.Fatal(err)
				}
			}
			ns[i] = float64(b.Elapsed()) / float64(b.N)
			if i == 1 && ns[0] > 0 {
				b.ReportMetric(ns[1]/ns[0], "x-onepass")
			}
		})
	}
}

// TestValidateFlatAllocs holds the compiled (flat) schema checks of a
// call's arguments and structuredContent free of allocations: they run on
// every tools/call of a tool with schemas (the C kit's template).
func TestValidateFlatAllocs(t *testing.T) {
	m := NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: list("tools", []string{`{"name":"t","inputSchema":{"type":"object",
			"properties":{"msg":{"type":"string","maxLength":100},"n":{"type":"integer"}},"required":["msg"]},
			"outputSchema":{"type":"object","properties":{"bytes":{"type":"integer"},"words":{"type":"integer"}},"required":["bytes"]}}`}),
	})
	g := build(t, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", m))
	defer g.Close(context.Background())
	tl := g.Tool("p_t")
	if tl == nil || tl.flat == nil || tl.outFlat == nil {
		t.Fatalf("tool p_t: got %+v; want flat input and output schemas", tl)
	}
	args, out := json.RawMessage(`{"msg":"hello","n":3}`), json.RawMessage(`{"bytes":11,"words":2}`)
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"arguments", func() error { return tl.validateArguments(args) }},
		{"structuredContent", func() error { return tl.validateStructured(out) }},
	} {
		if err := tc.run(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = tc.run() }); n != 0 {
			t.Errorf("%s: %v allocations per check; want 0", tc.name, n)
		}
	}
}
