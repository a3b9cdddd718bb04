package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
)

// Propagator reads and writes W3C trace context and baggage: from a
// request's params._meta (traceparent, tracestate, baggage, as MCP
// specifies) or its HTTP headers, and into a plugin's outbound HTTP.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{}, propagation.Baggage{})

// TraceContext returns ctx carrying the trace context of an HTTP
// request's traceparent, tracestate and baggage headers, for the server
// spans of the requests it holds ([Options.Tracer]); a traceparent in a
// request's params._meta takes precedence. Without a traceparent header
// it returns ctx.
func TraceContext(ctx context.Context, h http.Header) context.Context {
	if h.Get("Traceparent") == "" {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// traced wraps a method's handler in the server span of each request
// (kind server, named "<method> <target>" as the OpenTelemetry semantic
// conventions for MCP say), parented on the trace context of
// params._meta, else the one the transport put in ctx (TraceContext).
// Only a Server with a Tracer wraps its table: without one no handler
// pays anything.
func traced(tr trace.Tracer, m *method) handler {
	next := m.fn
	return func(ctx context.Context, s *session, req *request) (any, error) {
		ctx, sp := startServerSpan(ctx, tr, s, req)
		res, err := next(ctx, s, req)
		endServerSpan(sp, res, err)
		return res, err
	}
}

func startServerSpan(ctx context.Context, tr trace.Tracer, s *session, req *request) (context.Context, trace.Span) {
	if meta := req.param("_meta"); len(meta) > 0 {
		var mc struct {
			Traceparent string `json:"traceparent"`
			Tracestate  string `json:"tracestate"`
			Baggage     string `json:"baggage"`
		}
		if json.Unmarshal(meta, &mc) == nil && mc.Traceparent != "" {
			// The _meta context replaces the transport's.
			ctx = Propagator.Extract(trace.ContextWithSpanContext(ctx, trace.SpanContext{}), propagation.MapCarrier{
				"traceparent": mc.Traceparent, "tracestate": mc.Tracestate, "baggage": mc.Baggage})
		}
	}
	name := req.method
	target, _ := jsonrpc.Unquote(req.param("name"))
	switch req.method {
	case "tools/call", "prompts/get":
		if target != "" {
			name += " " + target
		}
	}
	ctx, sp := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	if !sp.IsRecording() { // sampled out: no attributes to build
		return ctx, sp
	}
	era := "handshake"
	if req.state != nil {
		era = "stateless"
	}
	sp.SetAttributes(
		attribute.String("mcp.method.name", req.method),
		attribute.String("jsonrpc.request.id", string(req.id)),
		attribute.String("mcphost.era", era),
		attribute.String("mcphost.connection", s.id),
	)
	if v := req.version(); v != 0 {
		sp.SetAttributes(attribute.String("mcp.protocol.version", v.String()))
	}
	switch req.method {
	case "tools/call":
		sp.SetAttributes(attribute.String("gen_ai.tool.name", target), attribute.String("gen_ai.operation.name", "execute_tool"))
	case "prompts/get":
		sp.SetAttributes(attribute.String("gen_ai.prompt.name", target))
	case "resources/read":
		uri, _ := jsonrpc.Unquote(req.param("uri"))
		sp.SetAttributes(attribute.String("mcp.resource.uri", uri))
	}
	return ctx, sp
}

// endServerSpan records the outcome: a protocol error's code, or a tool
// result with isError set (error.type "tool_error", as the conventions
// say; the plugin's fault, when it had one, is mcphost.fault, set by
// spanOutcome).
func endServerSpan(sp trace.Span, res any, err error) {
	switch {
	case err != nil:
		code := jsonrpc.CodeInternal
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			code = je.Code
		}
		sp.SetAttributes(attribute.Int("rpc.response.status_code", code), attribute.String("error.type", strconv.Itoa(code)))
		sp.SetStatus(codes.Error, err.Error())
	case isErrorResult(res):
		sp.SetAttributes(attribute.String("error.type", "tool_error"))
		sp.SetStatus(codes.Error, "tool result has isError set")
	}
	sp.End()
}

func isErrorResult(res any) bool {
	raw, ok := res.(json.RawMessage)
	return ok && bytes.Contains(raw, []byte(`"isError":true`))
}

// spanOutcome puts the plugin that served a call, and its fault (trap,
// timeout, out_of_memory, …: plugins.Fault), on the request's server span.
func spanOutcome(ctx context.Context, plugin string, err error) {
	sp := trace.SpanFromContext(ctx)
	sp.SetAttributes(attribute.String("mcp.plugin", plugin))
	if f := plugins.Fault(err); f != "" {
		sp.SetAttributes(attribute.String("mcphost.fault", f))
	}
}

// tracedRequest is peer.Request inside a client span: a real
// server→client request (handshake era), or one question of an
// input_required round (stateless era), which is either answered from the
// client's retry or asked, ending this round of the call.
func (p *peer) tracedRequest(ctx context.Context, tr trace.Tracer, method string, params json.RawMessage) (json.RawMessage, error) {
	round := "request"
	if p.state != nil {
		round = "input_required"
	}
	ctx, sp := tr.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("mcp.method.name", method), attribute.String("mcphost.round", round)))
	defer sp.End()
	res, err := p.request(ctx, method, params)
	switch {
	case errors.Is(err, errInputPending):
		sp.SetAttributes(attribute.Bool("mcphost.input.answered", false))
	case err != nil:
		sp.SetAttributes(attribute.String("error.type", "client_error"))
		sp.SetStatus(codes.Error, err.Error())
	case round == "input_required":
		sp.SetAttributes(attribute.Bool("mcphost.input.answered", true))
	}
	return res, err
}
