package streamable

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

// Streamable HTTP in the stateless era (2026-07-28): a POST without
// Mcp-Session-Id that is not initialize is served on its own, by a
// throw-away session that ends with the POST, so any replica can answer
// any request. The headers that mirror the body (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name) are checked against it first: proxies route on
// them.

const (
	hdrMethod = "Mcp-Method"
	hdrName   = "Mcp-Name"
	hdrParam  = "Mcp-Param-" // then a tool's x-mcp-header name
)

// isStatelessPost reports whether a session-less POST is for the stateless
// era: a single request other than a legacy initialize that says so, with
// the era's MCP-Protocol-Version header, its _meta or one of its methods.
// Anything else keeps the 2025 answer (400: a session is required), which
// is what tells a dual-era client to fall back to initialize.
func isStatelessPost(r *http.Request, msg *jsonrpc.Message) bool {
	if msg.Kind != jsonrpc.KindRequest || protocol.IsHandshakeInitialize(msg) {
		return false
	}
	return r.Header.Get(hdrVersion) == protocol.Stateless.String() || protocol.HasStatelessMeta(msg.ParamMembers.Get("_meta")) ||
		string(msg.Method) == "server/discover" || string(msg.Method) == "subscriptions/listen"
}

// isStatelessNotification reports whether a session-less POST is a
// notification from a stateless-era client (its MCP-Protocol-Version
// header says so).
func isStatelessNotification(r *http.Request, msg *jsonrpc.Message) bool {
	return msg.Kind == jsonrpc.KindNotification && r.Header.Get(hdrVersion) == protocol.Stateless.String()
}

// statelessNotification accepts a stateless-era client's notification
// with 202, as for any notification, and drops it: the era has no session
// for it to act on, and a request is cancelled by closing its connection.
// The official Go SDK closes the connection and also POSTs
// notifications/cancelled; a 400 here would fail its next call.
func (h *Handler) statelessNotification(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	if !h.oauth.authorize(w, r, h, msg, false) {
		return
	}
	h.log.Debug("stateless notification dropped: no session to act on (a request is cancelled by closing its connection)",
		"method", string(msg.Method))
	w.WriteHeader(http.StatusAccepted)
}

// stateless serves one stateless request.
func (h *Handler) stateless(w http.ResponseWriter, r *http.Request, body []byte, msg *jsonrpc.Message) {
	err := checkMirrorHeaders(r, msg)
	if err == nil && string(msg.Method) == "tools/call" {
		err = h.checkParamHeaders(r, msg)
	}
	if err != nil {
		writeStatus(w, http.StatusBadRequest, jsonrpc.AppendError(nil, msg.ID, err))
		return
	}
	if !h.oauth.authorize(w, r, h, msg, true) {
		return
	}
	hs := h.newHTTPSession(true, h.ownerOf(r))
	hs.enter()
	defer func() {
		hs.leave()
		hs.end(endDeleted)
	}()
	h.request(w, r, hs, body, []string{string(msg.ID)}, nil)
}

// checkMirrorHeaders compares MCP-Protocol-Version, Mcp-Method and
// Mcp-Name with the body: a missing or different one is -32020.
func checkMirrorHeaders(r *http.Request, msg *jsonrpc.Message) *jsonrpc.Error {
	mismatch := func(format string, args ...any) *jsonrpc.Error {
		e := jsonrpc.Errorf(protocol.CodeHeaderMismatch, "Header mismatch: "+format, args...)
		return e
	}
	meta := msg.ParamMembers.Get("_meta")
	if v, ok := jsonrpc.Unquote(jsonrpc.Member(meta, protocol.MetaVersion)); ok {
		if hv := r.Header.Get(hdrVersion); hv != v {
			return mismatch("%s is %q, the body's %s is %q", hdrVersion, hv, protocol.MetaVersion, v)
		}
	}
	if hm := r.Header.Get(hdrMethod); hm != string(msg.Method) {
		return mismatch("%s is %q, the body's method is %q", hdrMethod, hm, msg.Method)
	}
	var name string
	switch string(msg.Method) {
	case "tools/call", "prompts/get":
		name, _ = jsonrpc.Unquote(msg.ParamMembers.Get("name"))
	case "resources/read":
		name, _ = jsonrpc.Unquote(msg.ParamMembers.Get("uri"))
	case "tasks/get", "tasks/update", "tasks/cancel":
		name, _ = jsonrpc.Unquote(msg.ParamMembers.Get("taskId"))
	default:
		return nil
	}
	if hn := r.Header.Get(hdrName); hn != name {
		return mismatch("%s is %q, the body names %q", hdrName, hn, name)
	}
	return nil
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments: every parameter the tool's inputSchema marks with
// x-mcp-header is mirrored in the header it names, as sent or, wrapped as
// =?base64?…?=, Base64-encoded. A missing, extra or different header, or
// bad Base64, is -32020.
func (h *Handler) checkParamHeaders(r *http.Request, msg *jsonrpc.Message) *jsonrpc.Error {
	name, _ := jsonrpc.Unquote(msg.ParamMembers.Get("name"))
	schema := h.srv.ToolInputSchema(name)
	if schema == nil {
		return nil
	}
	args := msg.ParamMembers.Get("arguments")
	var bad *jsonrpc.Error
	jsonrpc.EachMember(jsonrpc.Member(schema, "properties"), func(k, prop []byte) bool {
		suffix, ok := jsonrpc.Unquote(jsonrpc.Member(prop, "x-mcp-header"))
		if !ok {
			return true
		}
		param, _ := jsonrpc.Unquote(append(append([]byte{'"'}, k...), '"'))
		hdr := hdrParam + suffix
		vals, sent := r.Header[http.CanonicalHeaderKey(hdr)]
		arg := jsonrpc.Member(args, param)
		if arg == nil || string(arg) == "null" {
			if sent {
				bad = jsonrpc.Errorf(protocol.CodeHeaderMismatch, "Header mismatch: %s is sent but argument %q is absent", hdr, param)
			}
			return bad == nil
		}
		want, isString := jsonrpc.Unquote(arg)
		if !isString {
			want = string(arg)
		}
		if !sent {
			bad = jsonrpc.Errorf(protocol.CodeHeaderMismatch, "Header mismatch: %s is missing for argument %q", hdr, param)
			return false
		}
		got, err := decodeParamHeader(vals[0])
		switch {
		case err != nil:
			bad = jsonrpc.Errorf(protocol.CodeHeaderMismatch, "Header mismatch: %s: %v", hdr, err)
		case got != want:
			bad = jsonrpc.Errorf(protocol.CodeHeaderMismatch, "Header mismatch: %s is %q, argument %q is %q", hdr, got, param, want)
		}
		return bad == nil
	})
	return bad
}

// decodeParamHeader decodes an Mcp-Param-* value: =?base64?…?= is strict
// standard Base64 (padding required); anything else is literal.
func decodeParamHeader(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", fmt.Errorf("invalid Base64: %w", err)
	}
	return string(b), nil
}

// statelessStatus is the HTTP status of a stateless response: errors that
// mean the request was malformed are 400, an unknown method 404.
func statelessStatus(resp []byte) int {
	e := jsonrpc.Member(resp, "error")
	if e == nil {
		return http.StatusOK
	}
	switch string(jsonrpc.Member(e, "code")) {
	case "-32601":
		return http.StatusNotFound
	case "-32700", "-32600", "-32602", "-32020", "-32021", "-32022":
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func writeStatus(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(status)
	w.Write(body)
}

// isModernClient reports whether a GET or DELETE without a session comes
// from a stateless-era client, which gets 405: that era has no standalone
// stream and no session to delete.
func isModernClient(r *http.Request) bool {
	v := r.Header.Get(hdrVersion)
	_, legacy := protocol.Parse(v)
	return v != "" && !legacy && strings.HasPrefix(v, "20")
}
