package sandbox

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/abi"
)

// The sandbox's spans go to an OpenTelemetry trace.Tracer
// ([EngineOptions].Tracer), the API the host's own spans use too: loading
// a module, each guest call, and each host function a guest calls
// (outbound HTTP with its allowed_hosts decision, file opens, secret reads
// by name, requests to the client). Only the API is imported; the caller
// brings the SDK and its exporter. A nil Tracer, the default, starts no
// span and costs a nil check per call. Attribute keys follow the
// OpenTelemetry semantic conventions where one fits.

// tracer is an Engine's Tracer with the propagator that writes the trace
// context into a plugin's outbound HTTP requests.
type tracer struct {
	trace.Tracer
	prop propagation.TextMapPropagator // nil: no trace context goes out
}

// newTracer returns the tracer of opts, or nil when it has none.
func newTracer(opts EngineOptions) *tracer {
	if opts.Tracer == nil {
		return nil
	}
	return &tracer{Tracer: opts.Tracer, prop: opts.Propagator}
}

// startSpan starts a span beneath the one of the call being served.
type startSpan func(name string, attrs ...attribute.KeyValue) trace.Span

// endSpan ends sp; a non-nil err marks it failed.
func endSpan(sp trace.Span, err error) {
	if err != nil {
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

type tracerKey struct{}

// withTracer returns ctx carrying tr for the host functions of the call
// it serves; the call's own ctx is the only way they can reach it.
func withTracer(ctx context.Context, tr *tracer) context.Context {
	return context.WithValue(ctx, tracerKey{}, tr)
}

// tracerFrom returns the tracer of the call ctx serves, or nil.
func tracerFrom(ctx context.Context) *tracer {
	tr, _ := ctx.Value(tracerKey{}).(*tracer)
	return tr
}

// spanIn returns how to start a span beneath the one ctx carries, or nil
// when ctx carries no tracer.
func spanIn(ctx context.Context) startSpan {
	tr := tracerFrom(ctx)
	if tr == nil {
		return nil
	}
	return func(name string, attrs ...attribute.KeyValue) trace.Span {
		_, sp := tr.Start(ctx, name, trace.WithAttributes(attrs...))
		return sp
	}
}

// startCall begins the span of one guest call of export; the tracer goes
// into the ctx it returns, for the call's host functions. The span is
// named for the question: a tool call is "wasm call_tool" through any
// of its exports (abi.ExportCallToolFrame, abi.ExportCallToolMembers),
// which wasm.export tells apart.
func startCall(ctx context.Context, tr *tracer, plugin, export string) (context.Context, trace.Span) {
	name := export
	if export == abi.ExportCallToolFrame || export == abi.ExportCallToolMembers {
		name = abi.ExportCallTool
	}
	ctx, sp := tr.Start(ctx, "wasm "+name, trace.WithAttributes(attribute.String("mcp.plugin", plugin), attribute.String("wasm.export", export)))
	return withTracer(ctx, tr), sp
}

// endCall ends a guest call's span with its fault kind (error.type).
func endCall(sp trace.Span, err error) {
	var ce *CallError
	if errors.As(err, &ce) {
		sp.SetAttributes(attribute.String("error.type", ce.Kind.String()))
	}
	endSpan(sp, err)
}

// startHTTP begins the span of one http_request and writes the trace
// context into its headers. nil when the call is not traced.
func startHTTP(hr *http.Request) (*http.Request, trace.Span) {
	ctx := hr.Context()
	tr := tracerFrom(ctx)
	if tr == nil {
		return hr, nil
	}
	attrs := []attribute.KeyValue{attribute.String("http.request.method", hr.Method), attribute.String("server.address", hr.URL.Hostname())}
	if p := urlPort(hr.URL); p != 0 {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	ctx, sp := tr.Start(ctx, "http_request "+hr.Method, trace.WithAttributes(attrs...))
	if tr.prop != nil {
		tr.prop.Inject(ctx, propagation.HeaderCarrier(hr.Header))
	}
	return hr.WithContext(ctx), sp
}

// endHTTP ends an http_request span with the allowed_hosts decision and
// the response's status (or the failure).
func endHTTP(sp trace.Span, resp *http.Response, err error) {
	var re *RefusedError
	switch {
	case errors.As(err, &re):
		sp.SetAttributes(attribute.String("mcphost.egress.decision", "refused"), attribute.String("mcphost.egress.key", re.Key),
			attribute.String("error.type", "refused"))
	case err != nil:
		sp.SetAttributes(attribute.String("error.type", "transport"))
	default:
		sp.SetAttributes(attribute.String("mcphost.egress.decision", "allowed"), attribute.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= 400 { // a client call: 4xx is an error too (HTTP semantic conventions)
			err = errors.New(resp.Status)
		}
	}
	endSpan(sp, err)
}

func urlPort(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	switch u.Scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}
