package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/abi"
)

// hostFunc is one import of abi.HostNamespace (see abi.HostFuncs).
//
// Signatures are exactly hyper-mcp's (src/service.rs host_fns), because
// wazero refuses to instantiate a guest whose import signature differs, and
// hyper-mcp plugins must run unmodified: a function takes an i64 offset of a
// kernel memory block holding JSON only when it has a payload, and returns
// an i64 offset of a JSON reply only when it is a request.
type hostFunc abi.HostFunc

// serve runs one host function for a module with limits lim (on the
// kernel, and on go-sdk in tests): payload is the JSON the guest passed (nil: none), perr a failure to read it. It returns the
// reply of a request (nil for a notification). ctx is the ctx of the Call
// being served (with its deadline), so the Peer is the one given to that
// Call. A request never traps and never outlives the call: without a Peer,
// or when the Peer fails, the guest gets {"error":"…"}.
func (h hostFunc) serve(ctx context.Context, log *slog.Logger, lim Limits, payload []byte, perr error) []byte {
	// http's span is the request's own (startHTTP), as for http_request.
	if tr := tracerFrom(ctx); tr != nil && h.Name != abi.HostHTTP {
		return h.serveTraced(ctx, tr, log, lim, payload, perr)
	}
	return h.answer(ctx, log, lim, payload, perr)
}

// answer is serve without a span.
func (h hostFunc) answer(ctx context.Context, log *slog.Logger, lim Limits, payload []byte, perr error) []byte {
	if perr == nil && len(payload) > 0 && !json.Valid(payload) {
		perr = errBadPayload
	}
	if len(payload) == 0 {
		payload = nil
	}
	if local := localHostFuncs[h.Name]; local != nil { // served here, without the client (localfuncs.go)
		return local(ctx, lim, payload, perr)
	}
	peer := PeerFrom(ctx)
	if !h.Reply {
		switch {
		case perr != nil:
			log.Warn("host function payload", "func", h.Name, "err", perr)
		case peer == nil:
			log.Debug("host notification dropped", "func", h.Name, "err", ErrNoPeer)
		default:
			if err := peer.Notify(ctx, h.Method, payload); err != nil {
				log.Debug("host notification failed", "func", h.Name, "err", err)
			}
		}
		return nil
	}
	switch {
	case perr != nil:
		return hostError(perr)
	case peer == nil:
		return hostError(ErrNoPeer)
	case abi.HoldsConsentKey(payload):
		log.Warn("host request refused: its input key is reserved for the host's consent questions", "func", h.Name)
		return hostError(errConsentKey)
	}
	res, err := peer.Request(ctx, h.Method, payload)
	switch {
	case err != nil:
		log.Debug("host request failed", "func", h.Name, "err", err)
		return hostError(err)
	case len(res) == 0:
		return []byte("null")
	}
	return res
}

var errBadPayload = errors.New("host function payload is not valid JSON")

var errConsentKey = errors.New("a request may not hold a string beginning with \"" + abi.ConsentInputKeyPrefix + "\": that input key is the host's own, for asking a person's consent")

func hostError(err error) []byte {
	b, _ := json.Marshal(abi.HostError{Error: err.Error()})
	return b
}

// serveTraced is serve inside a span named after the host function: a
// request to the client carries its MCP method (the Peer adds its own
// span beneath), a secret read the secret's name and whether it was set,
// never its value.
func (h hostFunc) serveTraced(ctx context.Context, tr *tracer, log *slog.Logger, lim Limits, payload []byte, perr error) []byte {
	attrs := []attribute.KeyValue{attribute.String("mcphost.host_function", h.Name)}
	if h.Method != "" {
		attrs = append(attrs, attribute.String("mcp.method.name", h.Method))
	}
	secret := h.Name == abi.HostKeyringSecret
	if secret {
		var e abi.KeyringEntry
		if json.Unmarshal(payload, &e) == nil {
			name := e.User
			if e.Service != "" {
				name = e.Service + "/" + e.User
			}
			attrs = append(attrs, attribute.String("mcphost.secret.name", name))
		}
	}
	ctx, sp := tr.Start(ctx, "host "+h.Name, trace.WithAttributes(attrs...))
	reply := h.answer(ctx, log, lim, payload, perr)
	var err error
	switch {
	case secret:
		sp.SetAttributes(attribute.Bool("mcphost.secret.found", len(reply) > 0))
	case perr != nil:
		err = perr
	case h.Reply && bytes.HasPrefix(reply, []byte(`{"error":`)):
		var he abi.HostError
		if json.Unmarshal(reply, &he) == nil {
			err = errors.New(he.Error)
		}
	}
	endSpan(sp, err)
	return reply
}
