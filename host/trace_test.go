package host

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
	headerTrace = "11111111111111111111111111111111"
	headerSpan  = "2222222222222222"
	tparentMeta = "00-" + clientTrace + "-" + clientSpan + "-01"
	tparentHTTP = "00-" + headerTrace + "-" + headerSpan + "-01"
)

// TestServerSpan: every request gets one server span, parented on
// params._meta.traceparent (both eras) or, without one, on the trace
// context the transport put in ctx (an HTTP traceparent header); a
// _meta traceparent wins over the header. The span carries the MCP
// semantic conventions' attributes, the plugin and the outcome.
func TestServerSpan(t *testing.T) {
	header := http.Header{}
	header.Set("traceparent", tparentHTTP)
	header.Set("baggage", "team=blue")
	meta := `"_meta":{"traceparent":"` + tparentMeta + `","tracestate":"vendor=x"}`
	for _, tc := range []struct {
		name, era       string
		header          bool
		line            string
		trace, parent   string
		wantName, fault string
		wantErrorType   string
	}{
		{"handshake meta", "handshake", false,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"},` + meta + `}}`,
			clientTrace, clientSpan, "tools/call test_echo", "", ""},
		{"handshake header", "handshake", true,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"}}}`,
			headerTrace, headerSpan, "tools/call test_echo", "", ""},
		{"meta beats header", "handshake", true,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"},` + meta + `}}`,
			clientTrace, clientSpan, "tools/call test_echo", "", ""},
		{"stateless meta", "stateless", false,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"` + tparentMeta + `"}}}`,
			clientTrace, clientSpan, "tools/call test_echo", "", ""},
		{"timeout fault", "handshake", false,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_fail",` + meta + `}}`,
			clientTrace, clientSpan, "tools/call test_fail", "timeout", "tool_error"},
		{"protocol error", "handshake", false,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",` + meta + `}}`,
			clientTrace, clientSpan, "tools/call nope", "", "-32602"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			srv := newServer(t, newFixture(), Options{Tracer: tp.Tracer("test")})
			ctx := context.Background()
			if tc.header {
				ctx = TraceContext(ctx, header)
			}
			c := startClientCtx(t, srv, ctx)
			if tc.era == "handshake" {
				c.initialize("2025-11-25", `{}`)
			}
			c.send("%s", tc.line)
			c.next()
			var spans []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.SpanKind() == trace.SpanKindServer && s.Name() != "initialize" {
					spans = append(spans, s)
				}
			}
			if len(spans) != 1 {
				t.Fatalf("got %d server spans; want 1", len(spans))
			}
			sp := spans[0]
			if got := sp.Name(); got != tc.wantName {
				t.Errorf("name %q; want %q", got, tc.wantName)
			}
			if got := sp.SpanContext().TraceID().String(); got != tc.trace {
				t.Errorf("trace %s; want %s", got, tc.trace)
			}
			if got := sp.Parent().SpanID().String(); got != tc.parent {
				t.Errorf("parent %s; want %s", got, tc.parent)
			}
			attrs := map[attribute.Key]string{}
			for _, a := range sp.Attributes() {
				attrs[a.Key] = a.Value.Emit()
			}
			want := map[attribute.Key]string{"mcp.method.name": "tools/call", "mcphost.era": tc.era,
				"error.type": tc.wantErrorType, "mcphost.fault": tc.fault}
			if tc.wantErrorType != "-32602" {
				want["mcp.plugin"] = "test"
				want["gen_ai.tool.name"] = tc.wantName[len("tools/call "):]
			}
			for k, v := range want {
				if attrs[k] != v {
					t.Errorf("%s = %q; want %q", k, attrs[k], v)
				}
			}
		})
	}
}

// TestPeerSpan: a plugin's request to the client is a client span beneath
// the server span, in the handshake era a real request, in the stateless
// era one question of an input_required round.
func TestPeerSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := newServer(t, newFixture(), Options{Tracer: tp.Tracer("test")})
	c := startClient(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_ask","arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}},%s}}`,
		meta2026(`{"sampling":{}}`)+`,"traceparent":"`+tparentMeta+`"`)
	c.next()
	var server, client sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindServer:
			server = s
		case trace.SpanKindClient:
			client = s
		}
	}
	if server == nil || client == nil {
		t.Fatalf("got server %v, client %v; want both", server, client)
	}
	if client.Parent().SpanID() != server.SpanContext().SpanID() || client.Name() != "sampling/createMessage" {
		t.Errorf("client span %q under %s; want sampling/createMessage under the server span %s",
			client.Name(), client.Parent().SpanID(), server.SpanContext().SpanID())
	}
	attrs := map[attribute.Key]string{}
	for _, a := range client.Attributes() {
		attrs[a.Key] = a.Value.Emit()
	}
	if attrs["mcphost.round"] != "input_required" || attrs["mcphost.input.answered"] != "false" {
		t.Errorf("client span attributes %v; want an unanswered input_required round", attrs)
	}
}

// BenchmarkTracedCall is BenchmarkHandle with tracing off (no
// Tracer: the handlers are not wrapped), with a Tracer whose sampler
// drops every span, and with every span recorded (exported to nowhere by
// a batcher-free recorder). Each reports its time as a ratio of "off"
// measured in the same run.
//
//	go test -run '^$' -bench TracedCall -benchmem ./host
func BenchmarkTracedCall(b *testing.B) {
	var offNs float64
	for _, tc := range []struct {
		name string
		tr   func() trace.Tracer
	}{
		{"off", func() trace.Tracer { return nil }},
		{"unsampled", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("b")
		}},
		{"on", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(discardProcessor{})).Tracer("b")
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := New(loadRegistry(b, nil, "echo"), Options{Logger: quietLog, Tracer: tc.tr()})
			defer srv.Close()
			out := &signalOut{sent: make(chan struct{}, 1)}
			c := srv.Connect(out, ConnInfo{ID: "bench"})
			defer c.Close()
			ctx := context.Background()
			c.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
			<-out.sent
			c.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"hello world"},"_meta":{"traceparent":"` + tparentMeta + `"}}}`)
			b.ReportAllocs()
			for b.Loop() {
				c.Handle(ctx, append([]byte(nil), line...))
				<-out.sent
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if tc.name == "off" {
				offNs = ns
			}
			if offNs > 0 {
				b.ReportMetric(ns/offNs, "x-off")
			}
		})
	}
}

// discardProcessor records every span and drops it when it ends.
type discardProcessor struct{}

func (discardProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardProcessor) Shutdown(context.Context) error                  { return nil }
func (discardProcessor) ForceFlush(context.Context) error                { return nil }
