package streamable

import (
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host"
)

// TestHTTPTraceparent: the server span of an HTTP request is parented on
// its traceparent header, unless params._meta carries one of its own.
func TestHTTPTraceparent(t *testing.T) {
	const (
		headerTrace = "11111111111111111111111111111111"
		metaTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	srv := newServer(t, newFixture(), host.Options{Tracer: tp.Tracer("test")})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.version = "2026-07-28"
	for _, tc := range []struct {
		name, meta, want string
	}{
		{"header", "", headerTrace},
		{"meta wins", `,"traceparent":"00-` + metaTrace + `-00f067aa0ba902b7-01"`, metaTrace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.Ended())
			call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + tc.meta + `}}}`
			resp := c.do(http.MethodPost, ht.url, call, "Mcp-Method", "tools/call", "Mcp-Name", "test_echo",
				"traceparent", "00-"+headerTrace+"-2222222222222222-01")
			if body := readAll(t, resp); resp.StatusCode != 200 {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
			var got []string
			for _, s := range rec.Ended()[before:] {
				if s.SpanKind() == trace.SpanKindServer {
					got = append(got, s.SpanContext().TraceID().String())
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("server spans in traces %v; want one in %s", got, tc.want)
			}
		})
	}
}
