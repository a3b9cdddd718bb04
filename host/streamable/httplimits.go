package streamable

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// Defaults of the HTTP limits (see Options and RATIONALE.md).
const (
	defaultBodyTimeout           = 30 * time.Second
	defaultMaxInFlightPerSession = 64
	defaultMaxInFlightPerClient  = 256
	defaultMaxSessions           = 1024
)

// limitOptions fills in the limits' defaults.
func limitOptions(opts *Options) {
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = defaultBodyTimeout
	}
	if opts.MaxInFlightPerSession <= 0 {
		opts.MaxInFlightPerSession = defaultMaxInFlightPerSession
	}
	if opts.MaxInFlightPerClient <= 0 {
		opts.MaxInFlightPerClient = defaultMaxInFlightPerClient
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = defaultMaxSessions
	}
}

// inFlight counts the POSTs in flight by key (a client, see
// Handler.client, or a session id). A key is forgotten when its count drops to zero, so the map
// holds no more entries than there are requests in flight.
type inFlight struct {
	mu sync.Mutex
	n  map[string]int
}

// enter counts one more request under key unless limit are already in
// flight; leave undoes a successful enter.
func (f *inFlight) enter(key string, limit int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = make(map[string]int)
	}
	if f.n[key] >= limit {
		return false
	}
	f.n[key]++
	return true
}

func (f *inFlight) leave(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key]--; f.n[key] <= 0 {
		delete(f.n, key)
	}
}

// admitPost counts a POST against its client's rate and its client's
// and its session's limits before its body is read, so neither slow
// bodies nor piles of slow calls from one client or one session hold more
// than their share. The client is an identity (see Handler.client), so
// users behind one proxy are counted apart. It answers 429 and reports
// false when a limit is reached; otherwise the caller runs the returned
// release when the request is done.
func (h *Handler) admitPost(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	client, name := h.client(r)
	if !h.rate.admit(w, r, client, name) {
		return nil, false
	}
	if !h.byClient.enter(client, h.opts.MaxInFlightPerClient) {
		h.refuse(w, r, name, http.StatusTooManyRequests, "max_in_flight_per_client", h.opts.MaxInFlightPerClient,
			"Too Many Requests: "+strconv.Itoa(h.opts.MaxInFlightPerClient)+" requests from this client are in flight")
		return nil, false
	}
	sid := r.Header.Get(hdrSession)
	if sid == "" {
		sid = r.URL.Query().Get("sessionId") // the legacy transport's
	}
	if sid != "" && !h.bySession.enter(sid, h.opts.MaxInFlightPerSession) {
		h.byClient.leave(client)
		h.refuse(w, r, name, http.StatusTooManyRequests, "max_in_flight_per_session", h.opts.MaxInFlightPerSession,
			"Too Many Requests: "+strconv.Itoa(h.opts.MaxInFlightPerSession)+" requests on this session are in flight")
		return nil, false
	}
	return func() {
		if sid != "" {
			h.bySession.leave(sid)
		}
		h.byClient.leave(client)
	}, true
}

// sessionsFull answers 503 and reports true when MaxSessions sessions
// (Streamable HTTP and legacy together) are open. Initializes racing each
// other may overshoot the limit by at most their number, which the
// per-client limit bounds.
func (h *Handler) sessionsFull(w http.ResponseWriter, r *http.Request) bool {
	h.mu.Lock()
	n := len(h.sessions) + len(h.legacy)
	h.mu.Unlock()
	if n < h.opts.MaxSessions {
		return false
	}
	w.Header().Set("Retry-After", "1")
	h.refuse(w, r, "", http.StatusServiceUnavailable, "max_sessions", h.opts.MaxSessions,
		"Service Unavailable: "+strconv.Itoa(h.opts.MaxSessions)+" sessions are open, the most this server allows")
	return true
}

// refuse logs a request turned away by a limit, naming the client it
// counted the request against when there is one, and answers it.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, client string, status int, limit string, n int, message string) {
	if client != "" {
		h.log.Warn("request refused", "limit", limit, "max", n, "client", client, "remote", r.RemoteAddr)
	} else {
		h.log.Warn("request refused", "limit", limit, "max", n, "remote", r.RemoteAddr)
	}
	httpError(w, status, codeHTTP, message)
}

// bodyDeadline bounds the time the body of r may take to arrive, from now
// (the headers are in: ReadHeaderTimeout covered them). The deadline is
// absolute, so dripping a byte at a time does not extend it. The returned
// func lifts it once the body is read, so a response streamed over SSE is
// not cut. Where the connection offers no deadline (HTTP/2 and some test
// servers may not) the body is read without one.
func bodyDeadline(w http.ResponseWriter, d time.Duration) (lift func()) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
		return func() {}
	}
	return func() { _ = rc.SetReadDeadline(time.Time{}) }
}

// isTimeout reports whether a body read failed on its deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
