package host

import (
	"net/http"
	"strings"
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
)

// isStatelessPost reports whether a session-less POST is for the stateless
// era: a single request other than a legacy initialize that says so, with
// the era's MCP-Protocol-Version header, its _meta or one of its methods.
// Anything else keeps the 2025 answer (400: a session is required), which
// is what tells a dual-era client to fall back to initialize.
func isStatelessPost(r *http.Request, msg *message) bool {
	if msg.kind != kindRequest || isLegacyInitialize(msg) {
		return false
	}
	return r.Header.Get(hdrVersion) == statelessVersion.String() || hasEraMeta(msg.params) ||
		string(msg.method) == "server/discover" || string(msg.method) == "subscriptions/listen"
}

// stateless serves one stateless request.
func (h *HTTPHandler) stateless(w http.ResponseWriter, r *http.Request, body []byte, msg *message) {
	if err := checkMirrorHeaders(r, msg); err != nil {
		writeStatus(w, http.StatusBadRequest, appendError(nil, msg.id, err))
		return
	}
	hs := h.newHTTPSession()
	hs.sess.stateless = true
	hs.enter()
	defer func() {
		hs.leave()
		hs.end(endDeleted)
	}()
	h.request(w, r, hs, body, []string{string(msg.id)}, nil)
}

// checkMirrorHeaders compares MCP-Protocol-Version, Mcp-Method and
// Mcp-Name with the body: a missing or different one is -32020.
func checkMirrorHeaders(r *http.Request, msg *message) *rpcError {
	mismatch := func(format string, args ...any) *rpcError {
		e := errorf(codeHeaderMismatch, "Header mismatch: "+format, args...)
		return e
	}
	meta := member(msg.params, "_meta")
	if v, ok := unquote(member(meta, metaVersion)); ok {
		if hv := r.Header.Get(hdrVersion); hv != v {
			return mismatch("%s is %q, the body's %s is %q", hdrVersion, hv, metaVersion, v)
		}
	}
	if hm := r.Header.Get(hdrMethod); hm != string(msg.method) {
		return mismatch("%s is %q, the body's method is %q", hdrMethod, hm, msg.method)
	}
	var name string
	switch string(msg.method) {
	case "tools/call", "prompts/get":
		name, _ = unquote(member(msg.params, "name"))
	case "resources/read":
		name, _ = unquote(member(msg.params, "uri"))
	default:
		return nil
	}
	if hn := r.Header.Get(hdrName); hn != name {
		return mismatch("%s is %q, the body names %q", hdrName, hn, name)
	}
	return nil
}

// statelessStatus is the HTTP status of a stateless response: errors that
// mean the request was malformed are 400, an unknown method 404.
func statelessStatus(resp []byte) int {
	e := member(resp, "error")
	if e == nil {
		return http.StatusOK
	}
	switch string(member(e, "code")) {
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
	_, legacy := parseVersion(v)
	return v != "" && !legacy && strings.HasPrefix(v, "20")
}
