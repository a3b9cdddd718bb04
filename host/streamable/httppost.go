package streamable

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

const (
	hdrSession  = "Mcp-Session-Id"
	hdrVersion  = "Mcp-Protocol-Version"
	hdrLastID   = "Last-Event-Id"
	ctJSON      = "application/json"
	ctEventSSE  = "text/event-stream"
	batchPrefix = "batch:" // batch keys; never a JSON id, which starts with '"', '-' or a digit
)

// post serves a client message: a request gets its response on this
// connection (JSON or SSE), a notification or a response gets 202.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	accept := r.Header.Values("Accept")
	if !accepts(accept, ctJSON) || !accepts(accept, ctEventSSE) {
		httpError(w, http.StatusNotAcceptable, codeHTTP, "Not Acceptable: Client must accept both application/json and text/event-stream")
		return
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		httpError(w, http.StatusUnsupportedMediaType, codeHTTP, "Unsupported Media Type: Content-Type must be application/json")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	sid := r.Header.Get(hdrSession)
	if sid == "" {
		if !jsonrpc.IsBatch(body) {
			if msg, derr := jsonrpc.Decode(body); derr == nil && isStatelessPost(r, &msg) {
				h.stateless(w, r, body, &msg)
				return
			} else if derr == nil && isStatelessNotification(r, &msg) {
				h.statelessNotification(w, r, &msg)
				return
			}
		}
		h.initialize(w, r, body)
		return
	}
	hs := h.lookup(r, sid)
	if hs == nil {
		httpError(w, http.StatusNotFound, codeSessionNotFound, "Session not found")
		return
	}
	defer hs.leave()
	if !checkVersionHeader(w, r) {
		return
	}
	if jsonrpc.IsBatch(body) {
		h.postBatch(w, r, hs, body)
		return
	}
	msg, derr := jsonrpc.Decode(body)
	if derr != nil {
		rejectBody(w, msg.ID, derr)
		return
	}
	if !h.oauth.authorize(w, r, h, &msg, false) {
		return
	}
	if msg.Kind != jsonrpc.KindRequest {
		if !h.handOver(msg.Kind == jsonrpc.KindResponse, func() { hs.serve(r, body, nil, nil) }) {
			unavailable(w)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.request(w, r, hs, body, []string{string(msg.ID)}, nil)
}

// request hands body (carrying requests under keys) to the session and
// writes what comes back for it.
func (h *Handler) request(w http.ResponseWriter, r *http.Request, hs *httpSession, body []byte, keys []string, batchKey []byte) {
	c := newConn()
	st, err := hs.openPost(keys, c)
	if errors.Is(err, errIDInUse) {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Bad Request: request id already in use by a request in flight")
		return
	}
	if err != nil {
		httpError(w, http.StatusNotFound, codeSessionNotFound, "Session not found")
		return
	}
	var job host.Job
	var run bool
	if !h.handOver(false, func() { job, run = hs.serve(r, body, batchKey, st) }) {
		hs.abandon(st)
		unavailable(w)
		return
	}
	if run {
		hs.runHere(w, r, st, c, job)
		return
	}
	hs.respond(w, r, st, c)
}

// postBatch serves a JSON-RPC batch, allowed only on sessions that
// negotiated 2025-03-26 (the only revision that defines them).
func (h *Handler) postBatch(w http.ResponseWriter, r *http.Request, hs *httpSession, body []byte) {
	if v := hs.conn.Version(); v != protocol.V20250326 {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Invalid Request: batches are only allowed on sessions that negotiated 2025-03-26 (this one: "+v.String()+")")
		return
	}
	elems, err := jsonrpc.SplitBatch(body)
	if err != nil {
		rejectBody(w, nil, err)
		return
	}
	// Find what the session will answer, as it decides it: every element
	// but notifications and responses, well-formed or not.
	var keys []string
	answered, onlyResponses := false, true
	seen := map[string]bool{}
	for _, e := range elems {
		msg, derr := jsonrpc.Decode(e)
		if derr == nil && !h.oauth.authorize(w, r, h, &msg, false) {
			return // the whole batch: one 403 names the scope to ask for
		}
		if msg.Kind != jsonrpc.KindResponse {
			onlyResponses = false
		}
		if msg.Kind != jsonrpc.KindNotification && msg.Kind != jsonrpc.KindResponse {
			answered = true
		}
		if derr == nil && msg.Kind == jsonrpc.KindRequest && !seen[string(msg.ID)] {
			seen[string(msg.ID)] = true
			keys = append(keys, string(msg.ID))
		}
	}
	if !answered {
		if !h.handOver(onlyResponses, func() { hs.serve(r, body, nil, nil) }) {
			unavailable(w)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := batchPrefix + strconv.FormatInt(hs.batchSeq(), 10)
	h.request(w, r, hs, body, append(keys, key), []byte(key))
}

func (hs *httpSession) batchSeq() int64 {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.nextStream++ // a cheap unique number; stream numbers may skip
	return hs.nextStream
}

// initialize serves a POST without a session: only an initialize request
// may come so, and it creates the session when it succeeds.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, body []byte) {
	var msg jsonrpc.Message
	var derr *jsonrpc.Error
	if !jsonrpc.IsBatch(body) {
		msg, derr = jsonrpc.Decode(body)
	}
	switch {
	case derr != nil:
		rejectBody(w, msg.ID, derr)
		return
	case msg.Kind != jsonrpc.KindRequest || string(msg.Method) != "initialize":
		httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: Mcp-Session-Id header is required")
		return
	}
	if h.sessionsFull(w, r) {
		return
	}
	hs := h.newHTTPSession(false, h.ownerOf(r))
	hs.enter()
	c := newConn()
	st, _ := hs.openPost([]string{string(msg.ID)}, c)
	if !h.handOver(false, func() { hs.serve(r, body, nil, nil) }) {
		hs.end(endShutdown)
		unavailable(w)
		return
	}
	// initialize is served inline: its response is queued by now.
	hs.mu.Lock()
	resp, answered := st.json, st.answered && st.mode == modeJSON
	hs.mu.Unlock()
	if !answered {
		hs.end(endShutdown)
		httpError(w, http.StatusInternalServerError, jsonrpc.CodeInternal, "Internal Server Error: initialize was not answered")
		return
	}
	m, _ := jsonrpc.Decode(resp)
	if m.Error != nil {
		hs.end(endDeleted)
		writeJSON(w, resp)
		return
	}
	h.mu.Lock()
	h.sessions[hs.id] = hs
	h.mu.Unlock()
	hs.leave()
	hs.log.Info("session started", "transport", "streamable-http", "remote", r.RemoteAddr)
	w.Header().Set(hdrSession, hs.id)
	writeJSON(w, resp)
}

// get opens the standalone SSE stream, or resumes any stream of the
// session from Last-Event-ID.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(hdrSession) == "" && isModernClient(r) {
		methodNotAllowed(w, "POST")
		return
	}
	if !accepts(r.Header.Values("Accept"), ctEventSSE) {
		httpError(w, http.StatusNotAcceptable, codeHTTP, "Not Acceptable: Client must accept text/event-stream")
		return
	}
	hs := h.sessionFor(w, r)
	if hs == nil {
		return
	}
	defer hs.leave()
	if h.isClosing() {
		unavailable(w)
		return
	}
	c := newConn()
	if last := r.Header.Get(hdrLastID); last != "" {
		num, seq, ok := parseEventID(last)
		if !ok {
			httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: malformed Last-Event-ID")
			return
		}
		st := hs.resume(num, c)
		if st == nil {
			httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: Last-Event-ID names no stream of this session that can be resumed")
			return
		}
		hs.pump(w, r, st, c, -1, seq)
		return
	}
	prime, after, ok := hs.attachStandalone(c)
	if !ok {
		httpError(w, http.StatusConflict, codeHTTP, "Conflict: Only one SSE stream is allowed per session")
		return
	}
	hs.pump(w, r, hs.standalone, c, prime, after)
}

// delete ends a session.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(hdrSession) == "" && isModernClient(r) {
		methodNotAllowed(w, "POST")
		return
	}
	hs := h.sessionFor(w, r)
	if hs == nil {
		return
	}
	hs.leave()
	if h.remove(hs) {
		hs.end(endDeleted)
	}
	w.WriteHeader(http.StatusOK)
}

// sessionFor returns the request's session, marked busy, or writes the
// error (400 without a session id or with an unsupported protocol
// version, 404 for an unknown session or another identity's) and returns
// nil.
func (h *Handler) sessionFor(w http.ResponseWriter, r *http.Request) *httpSession {
	sid := r.Header.Get(hdrSession)
	if sid == "" {
		httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: Mcp-Session-Id header is required")
		return nil
	}
	hs := h.lookup(r, sid)
	if hs == nil {
		httpError(w, http.StatusNotFound, codeSessionNotFound, "Session not found")
		return nil
	}
	if !checkVersionHeader(w, r) {
		hs.leave()
		return nil
	}
	return hs
}

// checkVersionHeader accepts a request without MCP-Protocol-Version (the
// session's version applies) or with any supported one: clients send
// other supported values than the negotiated one (conformance 0.1.16
// does), and the session's version governs the protocol anyway.
func checkVersionHeader(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get(hdrVersion)
	if v == "" {
		return true
	}
	if _, ok := protocol.Parse(v); ok {
		return true
	}
	httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: Unsupported protocol version: "+v+" (supported versions: "+protocol.SupportedList()+")")
	return false
}

// readBody reads a POST body within MaxBodyBytes, or writes 413 (or 400)
// and reports false.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	lift := bodyDeadline(w, h.opts.BodyTimeout)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err == nil {
		// After a failure the deadline stays: net/http would otherwise
		// wait for the rest of a slow body before closing the connection.
		lift()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case isTimeout(err):
		h.log.Warn("request refused", "limit", "body_timeout", "max", h.opts.BodyTimeout, "remote", r.RemoteAddr, "got", len(body))
		w.Header().Set("Connection", "close")
		httpError(w, http.StatusRequestTimeout, codeHTTP, "Request Timeout: the body did not arrive within "+h.opts.BodyTimeout.String())
		return nil, false
	case errors.As(err, &tooLarge):
		// The answer carries the request's id when the body's first bytes
		// show it, so the client's call fails now instead of timing out.
		id := jsonrpc.PeekID(body[:min(len(body), jsonrpc.PeekBytes)])
		w.Header().Set("Content-Type", ctJSON)
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		w.Write(jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: codeHTTP, Message: "Request Entity Too Large: the body exceeds " + strconv.FormatInt(h.opts.MaxBodyBytes, 10) + " bytes"}))
		return nil, false
	case err != nil:
		httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: reading the body failed")
		return nil, false
	}
	return body, true
}

// rejectBody answers a body that is not a valid JSON-RPC message with 400
// and the JSON-RPC error (with the id, when it could be read).
func rejectBody(w http.ResponseWriter, id []byte, err *jsonrpc.Error) {
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(http.StatusBadRequest)
	w.Write(jsonrpc.AppendError(nil, id, err))
}

func unavailable(w http.ResponseWriter) {
	httpError(w, http.StatusServiceUnavailable, codeHTTP, "Service Unavailable: the server is shutting down")
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", ctJSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
