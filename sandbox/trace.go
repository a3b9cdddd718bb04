package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mcphost/mcphost/abi"
)

// Tracer receives the spans of the sandbox's work: loading a module, each
// guest call, and each host function a guest calls (outbound HTTP with its
// allowed_hosts decision, file opens, secret reads by name, requests to the
// client). The sandbox imports no tracing library: the caller implements
// Tracer (cmd/mcphost does, with OpenTelemetry) and gives it to
// [EngineOptions]. A nil Tracer, the default, starts no span and costs a
// nil check per call.
type Tracer interface {
	// Start begins a span named name as a child of the span ctx carries
	// and returns a ctx carrying the new one. Attribute keys follow the
	// OpenTelemetry semantic conventions where one fits.
	Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, Span)
	// Inject writes the trace context of ctx (traceparent, tracestate,
	// baggage) into the headers of a plugin's outbound HTTP request, so
	// the server it calls continues the same trace.
	Inject(ctx context.Context, h http.Header)
}

// Span is one span a [Tracer] started.
type Span interface {
	// SetAttrs adds attributes to the span.
	SetAttrs(attrs ...slog.Attr)
	// End ends the span; a non-nil err marks it failed.
	End(err error)
}

type tracerKey struct{}

// withTracer returns ctx carrying tr for the host functions of the call
// it serves; the call's own ctx is the only way they can reach it.
func withTracer(ctx context.Context, tr Tracer) context.Context {
	return context.WithValue(ctx, tracerKey{}, tr)
}

// tracerFrom returns the Tracer of the call ctx serves, or nil.
func tracerFrom(ctx context.Context) Tracer {
	tr, _ := ctx.Value(tracerKey{}).(Tracer)
	return tr
}

// spanIn returns how to start a span beneath the one ctx carries, or nil
// when ctx carries no Tracer.
func spanIn(ctx context.Context) func(name string, attrs ...slog.Attr) Span {
	tr := tracerFrom(ctx)
	if tr == nil {
		return nil
	}
	return func(name string, attrs ...slog.Attr) Span {
		_, sp := tr.Start(ctx, name, attrs...)
		return sp
	}
}

// startCall begins the span of one guest call of export; the tracer goes
// into the ctx it returns, for the call's host functions.
func startCall(ctx context.Context, tr Tracer, plugin, export string) (context.Context, Span) {
	ctx, sp := tr.Start(ctx, "wasm "+export, slog.String("mcp.plugin", plugin), slog.String("wasm.export", export))
	return withTracer(ctx, tr), sp
}

// endCall ends a guest call's span with its fault kind (error.type).
func endCall(sp Span, err error) {
	var ce *CallError
	if errors.As(err, &ce) {
		sp.SetAttrs(slog.String("error.type", ce.Kind.String()))
	}
	sp.End(err)
}

// startHTTP begins the span of one http_request and writes the trace
// context into its headers. nil when the call is not traced.
func startHTTP(hr *http.Request) (*http.Request, Span) {
	ctx := hr.Context()
	tr := tracerFrom(ctx)
	if tr == nil {
		return hr, nil
	}
	attrs := []slog.Attr{slog.String("http.request.method", hr.Method), slog.String("server.address", hr.URL.Hostname())}
	if p := urlPort(hr.URL); p != 0 {
		attrs = append(attrs, slog.Int("server.port", p))
	}
	ctx, sp := tr.Start(ctx, "http_request "+hr.Method, attrs...)
	tr.Inject(ctx, hr.Header)
	return hr.WithContext(ctx), sp
}

// endHTTP ends an http_request span with the allowed_hosts decision and
// the response's status (or the failure).
func endHTTP(sp Span, resp *http.Response, err error) {
	var re *RefusedError
	switch {
	case errors.As(err, &re):
		sp.SetAttrs(slog.String("mcphost.egress.decision", "refused"), slog.String("mcphost.egress.key", re.Key),
			slog.String("error.type", "refused"))
	case err != nil:
		sp.SetAttrs(slog.String("error.type", "transport"))
	default:
		sp.SetAttrs(slog.String("mcphost.egress.decision", "allowed"), slog.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= 400 { // a client call: 4xx is an error too (HTTP semantic conventions)
			err = errors.New(resp.Status)
		}
	}
	sp.End(err)
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

// serveTraced is serve inside a span named after the host function: a
// request to the client carries its MCP method (the Peer adds its own
// span beneath), a secret read the secret's name and whether it was set,
// never its value.
func (h hostFunc) serveTraced(ctx context.Context, tr Tracer, log *slog.Logger, lim Limits, payload []byte, perr error) []byte {
	attrs := []slog.Attr{slog.String("mcphost.host_function", h.Name)}
	if h.Method != "" {
		attrs = append(attrs, slog.String("mcp.method.name", h.Method))
	}
	secret := h.Name == abi.HostKeyringSecret
	if secret {
		var e abi.KeyringEntry
		if json.Unmarshal(payload, &e) == nil {
			name := e.User
			if e.Service != "" {
				name = e.Service + "/" + e.User
			}
			attrs = append(attrs, slog.String("mcphost.secret.name", name))
		}
	}
	ctx, sp := tr.Start(ctx, "host "+h.Name, attrs...)
	reply := h.answer(ctx, log, lim, payload, perr)
	var err error
	switch {
	case secret:
		sp.SetAttrs(slog.Bool("mcphost.secret.found", len(reply) > 0))
	case perr != nil:
		err = perr
	case h.Reply && bytes.HasPrefix(reply, []byte(`{"error":`)):
		var he abi.HostError
		if json.Unmarshal(reply, &he) == nil {
			err = errors.New(he.Error)
		}
	}
	sp.End(err)
	return reply
}
