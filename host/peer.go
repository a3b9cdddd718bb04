package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/consent"
)

// peer is the [plugins.Peer] of one request: the host functions of the
// plugin call serving the request reach the client through it. Everything
// it sends is related to the request's id, so Streamable HTTP can put it on
// that request's stream. It is the request itself, seen through another
// method set, so a call costs no extra allocation.
type peer request

var _ plugins.Peer = (*peer)(nil)

func (req *request) peer() *peer { return (*peer)(req) }

// Notify sends a notification about the request. Log messages go out only
// if the session's level admits them, progress only if the request carried
// a progress token (which is filled in with its exact JSON type), and
// resources/updated only to a subscriber. Nothing is sent once the request
// has been answered: the spec forbids progress after completion.
func (p *peer) Notify(_ context.Context, method string, params json.RawMessage) error {
	req := (*request)(p)
	s := req.sess
	if params != nil && !jsonscan.Valid(params) {
		return fmt.Errorf("notify %s: params are not valid JSON", method)
	}
	if req.done.Load() {
		return nil
	}
	switch method {
	case "notifications/message":
		level, _ := jsonrpc.Unquote(jsonrpc.Member(params, "level"))
		if !req.admits(level) {
			return nil
		}
	case "notifications/progress":
		token := progressToken(req.param("_meta"))
		if token == nil {
			return nil
		}
		params = protocol.FilterProgress(jsonrpc.SetMember(params, "progressToken", token), req.version())
	case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed":
		// A plugin's own change reaches the stateless era's listeners
		// whichever request it was serving, and the session of the
		// request when it is one of the handshake era.
		s.srv.notifyListeners(method, params)
		if req.state != nil || !s.ready.Load() {
			return nil
		}
	case "notifications/resources/updated":
		s.srv.notifyListeners(method, params)
		uri, _ := jsonrpc.Unquote(jsonrpc.Member(params, "uri"))
		if req.state != nil || !s.subscribed(uri) {
			return nil
		}
	case "notifications/elicitation/complete":
		if req.version() < protocol.V20251125 {
			return nil
		}
	default:
		return fmt.Errorf("notify %s: not a notification a plugin may send: %w", method, ErrNotSupported)
	}
	s.notify(method, params, req.id)
	return nil
}

// Request sends a server→client request and waits for the client's answer,
// bounded by ctx (the plugin call's deadline and cancellation; when ctx
// ends first the client is sent notifications/cancelled). A request the
// client did not declare a capability for, or that its protocol version
// does not define, fails at once with ErrNotSupported. An error response
// becomes a *ClientError.
func (p *peer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if tr := p.sess.srv.opts.Tracer; tr != nil {
		return p.tracedRequest(ctx, tr, method, params)
	}
	return p.request(ctx, method, params)
}

// request is Request without a span.
func (p *peer) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	req := (*request)(p)
	s := req.sess
	if params != nil && !jsonscan.Valid(params) {
		return nil, fmt.Errorf("%s: params are not valid JSON", method)
	}
	if err := mayRequest(req.clientState(), method, params); err != nil {
		if req.input != nil && errors.Is(err, ErrNotSupported) && !consentAsk(params) {
			// A plugin that needed the capability makes the request
			// -32021; a question about a plugin's reach does not (the
			// refusal, which names the key to edit, is the result).
			req.input.refused(method)
		}
		return nil, err
	}
	if req.state != nil { // stateless: no waiting, the client retries (inputrequired.go)
		if req.input == nil {
			return nil, fmt.Errorf("%s: %w: %s cannot ask the client for input in protocol version %s", method, ErrNotSupported, req.method, req.version())
		}
		return req.input.ask(method, params)
	}
	id, ch, err := s.newPending()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	buf := getBuf()
	*buf = jsonrpc.AppendRequest(*buf, id, method, params)
	s.send(*buf, req.id)
	putBuf(buf)
	s.workers.kick() // the answer comes by reading: a reader running a call must read on
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		if s.dropPending(id) {
			s.notify("notifications/cancelled", cancelParams(id, ctx.Err()), req.id)
		}
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// consentAsk reports whether params are the host's own question for a
// person's consent (consent.Params), which no guest can send.
func consentAsk(params json.RawMessage) bool {
	key, _ := inputKey(params)
	return consent.IsKey(key)
}

// mayRequest checks the client's capabilities and version for a
// server→client request.
func mayRequest(st *clientState, method string, params json.RawMessage) error {
	if st == nil {
		return fmt.Errorf("%s: %w (session not initialized)", method, ErrNotSupported)
	}
	missing := func(what string) error {
		return fmt.Errorf("%s: %w: the client did not declare %s", method, ErrNotSupported, what)
	}
	switch method {
	case "ping":
		if st.version >= protocol.Stateless {
			return fmt.Errorf("%s: %w: protocol version %s has no ping", method, ErrNotSupported, st.version)
		}
	case "sampling/createMessage":
		if !st.caps.sampling {
			return missing("the sampling capability")
		}
		if jsonrpc.Member(params, "tools") != nil && !st.caps.samplingTools {
			return missing("sampling.tools")
		}
	case "elicitation/create":
		mode, _ := jsonrpc.Unquote(jsonrpc.Member(params, "mode"))
		switch {
		case st.version < protocol.V20250618:
			return fmt.Errorf("%s: %w: protocol version %s has no elicitation", method, ErrNotSupported, st.version)
		case mode == "url" && st.version < protocol.V20251125:
			return fmt.Errorf("%s: %w: protocol version %s has no URL elicitation", method, ErrNotSupported, st.version)
		case mode == "url" && !st.caps.elicitURL:
			return missing("elicitation.url")
		case mode != "url" && !st.caps.elicitForm:
			return missing("elicitation (form mode)")
		}
	case "roots/list":
		if !st.caps.roots {
			return missing("the roots capability")
		}
	default:
		return fmt.Errorf("%s: %w: not a request a plugin may send", method, ErrNotSupported)
	}
	return nil
}

// newPending allocates a server→client request id and its reply channel.
func (s *session) newPending() (json.RawMessage, chan reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return nil, nil, ErrClosed
	}
	s.nextID++
	id := json.RawMessage(strconv.AppendInt(nil, s.nextID, 10))
	ch := make(chan reply, 1)
	s.pending[string(id)] = ch
	return id, ch, nil
}

// dropPending forgets a request we no longer wait for and reports whether
// it was still pending (no answer has arrived).
func (s *session) dropPending(id json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[string(id)]
	delete(s.pending, string(id))
	return ok
}

func cancelParams(id json.RawMessage, cause error) []byte {
	b := append([]byte(`{"requestId":`), id...)
	b = append(b, `,"reason":`...)
	b = jsonscan.AppendString(b, cause.Error())
	return append(b, '}')
}

// progressToken returns params._meta.progressToken, raw, or nil when absent
// or not a string or number.
func progressToken(meta json.RawMessage) json.RawMessage {
	tok := jsonrpc.Member(meta, "progressToken")
	if len(tok) == 0 || tok[0] != '"' && tok[0] != '-' && (tok[0] < '0' || tok[0] > '9') {
		return nil
	}
	return tok
}
