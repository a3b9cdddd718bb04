package streamable

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins/store"
)

// Options configure the HTTP transports (see [NewHandler]).
// Zero values mean the documented defaults.
type Options struct {
	// Path is the Streamable HTTP endpoint (default "/mcp"). The deprecated
	// HTTP+SSE transport of 2024-11-05 is served at /sse and /messages.
	Path string
	// AllowedHosts are Host header values accepted besides the loopback
	// names (localhost, 127.0.0.1 and [::1], with any port). An entry
	// without a port matches every port; "*" accepts any Host, which is
	// only safe behind a proxy that checks it. Anything else gets 403: this
	// is the defence against DNS rebinding.
	AllowedHosts []string
	// AllowedOrigins are Origin header values ("https://app.example.com",
	// scheme://host[:port]) accepted besides loopback origins and the
	// request's own (allowed) host; "*" accepts any. A request without
	// Origin (not from a browser) is not affected; any other Origin gets 403.
	AllowedOrigins []string
	// AuthToken, when not empty, is the bearer token every request must
	// carry in Authorization; a missing or wrong one gets 401.
	AuthToken string
	// Auth, when set, makes the transport an OAuth 2.1 resource server
	// (auth.go): every request needs a token Auth accepts, and the scopes
	// it holds decide what the caller may list and use. It excludes
	// AuthToken. The caller closes it.
	Auth *auth.Validator
	// SessionIdle ends a session after this long without requests or open
	// streams (default 30 minutes). Clients that never DELETE their session
	// (the conformance suite, killed processes) leave nothing behind.
	SessionIdle time.Duration
	// MaxBodyBytes bounds a POST body (default host.Options.MaxMessageBytes);
	// a larger one gets 413.
	MaxBodyBytes int64
	// ReplayEvents and ReplayBytes bound each session's buffer of SSE
	// events kept for clients that resume with Last-Event-ID (defaults 256
	// events and 4 MiB; the newest event is always kept).
	ReplayEvents int
	ReplayBytes  int
	// PollAfter, when positive, closes the SSE stream of a request still
	// running this long after its POST (clients on 2025-11-25 or later
	// only: they received a priming event id and a retry delay), and the
	// client picks up the rest with GET and Last-Event-ID (SEP-1699
	// polling). Zero means streams stay open until the response.
	PollAfter time.Duration
	// Retry is the reconnection delay sent with priming events (default 1s).
	Retry time.Duration
	// ResumeWindow is how long a POST's SSE stream may stay without a
	// connection before its requests are cancelled (default 10s): a
	// client that lost the connection may resume the stream with GET and
	// Last-Event-ID meanwhile. A POST that was not streaming yet (no event
	// sent: the answer would have been JSON) has nothing to resume, and
	// its requests are cancelled as soon as its connection closes.
	ResumeWindow time.Duration

	// Limits against clients that hold resources (see httplimits.go).

	// BodyTimeout bounds how long a POST body may take to arrive once its
	// headers are in (default 30s); a slower one gets 408 and its
	// connection is closed. SSE streams are not affected.
	BodyTimeout time.Duration
	// MaxInFlightPerSession and MaxInFlightPerClient bound the POSTs in
	// flight (body being read or request running) per session and per
	// client IP address (defaults 64 and 256); one more gets 429.
	MaxInFlightPerSession int
	MaxInFlightPerClient  int
	// MaxSessions bounds the open sessions, both transports together
	// (default 1024); one more initialize gets 503.
	MaxSessions int

	// Replicas behind a balancer (issue 31).

	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (see Handler.clientAddr); from any other peer it is ignored. The
	// per-client limits count a client with no checked identity by that
	// address.
	TrustedProxies []netip.Prefix
	// RatePerClient, when positive, bounds each client's POSTs (a client
	// is an identity: see Handler.client) to that many per RatePeriod
	// (default a minute); one more gets 429 with Retry-After.
	RatePerClient int
	RatePeriod    time.Duration
	// Store counts them (store.Store.Allow); nil counts in this process.
	// Replicas pass the store they share, so that a client's requests add
	// up whichever replica they reach.
	Store store.Store
	// DrainGrace is how long Serve keeps serving once its context ends
	// while /readyz answers 503, so that balancers probing /readyz stop
	// sending work before the shutdown refuses it. It applies only once
	// /readyz has been probed (nothing watches it otherwise); zero skips it.
	DrainGrace time.Duration
}

const (
	defaultHTTPPath     = "/mcp"
	defaultSessionIdle  = 30 * time.Minute
	defaultReplayEvents = 256
	defaultReplayBytes  = 4 << 20
	defaultRetry        = time.Second
	defaultResumeWindow = 10 * time.Second
	legacySSEPath       = "/sse"
	legacyMessagesPath  = "/messages"
)

// Error codes of HTTP-level errors, as the reference SDK sends them.
const (
	codeHTTP            = -32000
	codeSessionNotFound = -32001
)

// Handler serves MCP over Streamable HTTP (2025-03-26 and later) and
// over the HTTP+SSE transport of 2024-11-05 for older clients. Both feed
// the same sessions as stdio: only framing and routing live here.
// Close (or Shutdown) must be called to end its sessions and its expiry
// goroutine.
type Handler struct {
	srv   *host.Server
	opts  Options
	log   *slog.Logger
	check checker
	oauth *oauth // nil without Options.Auth

	// gate orders shutdown against hand-overs: a message that may start
	// work is handed to a session only under gate.RLock with closing
	// unset, so once Shutdown has set closing under gate.Lock no request
	// is added to a session's wait group while it is being waited for.
	gate    sync.RWMutex
	closing bool

	byClient  inFlight // POSTs in flight by client (see Handler.client)
	bySession inFlight // and by session id
	rate      *rateLimit

	// probed: /readyz has been asked (a balancer watches it); draining:
	// Serve's context ended and /readyz answers 503 while requests are
	// still served (see Options.DrainGrace).
	probed, draining atomic.Bool

	mu       sync.Mutex
	sessions map[string]*httpSession
	legacy   map[string]*legacySession

	stop      chan struct{} // closed by Close: the expiry goroutine exits
	janitor   sync.WaitGroup
	closeOnce sync.Once

	// testHookDrainEnd, when set, ends a drain before DrainGrace when it
	// is closed.
	testHookDrainEnd chan struct{}
	// testHookClosing, when set, runs once Shutdown refuses new work.
	testHookClosing func()
	// testHookLegacyEnd, when set, runs when a legacy session has ended.
	testHookLegacyEnd func()
}

// NewHandler returns the http.Handler of the HTTP transports. It
// starts a goroutine that expires idle sessions; [Handler.Close] stops
// it.
func NewHandler(srv *host.Server, opts Options) *Handler {
	if opts.Path == "" {
		opts.Path = defaultHTTPPath
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = defaultSessionIdle
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = srv.MaxMessageBytes()
	}
	if opts.ReplayEvents <= 0 {
		opts.ReplayEvents = defaultReplayEvents
	}
	if opts.ReplayBytes <= 0 {
		opts.ReplayBytes = defaultReplayBytes
	}
	if opts.Retry <= 0 {
		opts.Retry = defaultRetry
	}
	if opts.ResumeWindow <= 0 {
		opts.ResumeWindow = defaultResumeWindow
	}
	limitOptions(&opts)
	h := &Handler{
		srv:      srv,
		opts:     opts,
		log:      srv.Logger().With("transport", "http"),
		check:    newChecker(opts),
		oauth:    newOAuth(opts.Auth, opts.Path),
		sessions: make(map[string]*httpSession),
		legacy:   make(map[string]*legacySession),
		stop:     make(chan struct{}),
	}
	h.rate = newRateLimit(opts, h.log)
	h.janitor.Add(1)
	go h.expireLoop()
	return h
}

// ServeHTTP implements http.Handler: the probes (/healthz, /readyz, see
// httphealth.go), then DNS-rebinding and origin checks and authentication,
// for every other path, then the endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.probe(w, r) {
		return
	}
	if err := h.check.host(r); err != nil {
		h.log.Warn("request refused", "err", err, "host", r.Host, "remote", r.RemoteAddr)
		httpError(w, http.StatusForbidden, codeHTTP, "Forbidden: "+err.Error())
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if err := h.check.origin(origin, r.Host); err != nil {
			h.log.Warn("request refused", "err", err, "origin", origin, "remote", r.RemoteAddr)
			httpError(w, http.StatusForbidden, codeHTTP, "Forbidden: "+err.Error())
			return
		}
		cors(w, origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			preflight(w, r)
			return
		}
	}
	if h.oauth.metadata(w, r) {
		return
	}
	if r = h.oauth.authenticate(w, r, h); r == nil {
		return
	}
	if !h.check.authorized(r) {
		challenge := `Bearer realm="mcphost"`
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		httpError(w, http.StatusUnauthorized, codeHTTP, "Unauthorized: a valid bearer token is required")
		return
	}
	if r.Method == http.MethodPost {
		release, ok := h.admitPost(w, r)
		if !ok {
			return
		}
		defer release()
	}
	switch r.URL.Path {
	case h.opts.Path:
		switch r.Method {
		case http.MethodPost:
			h.post(w, r)
		case http.MethodGet:
			h.get(w, r)
		case http.MethodDelete:
			h.delete(w, r)
		default:
			methodNotAllowed(w, "GET, POST, DELETE")
		}
	case legacySSEPath:
		if r.Method != http.MethodGet {
			methodNotAllowed(w, "GET")
			return
		}
		h.legacyStream(w, r)
	case legacyMessagesPath:
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST")
			return
		}
		h.legacyPost(w, r)
	default:
		http.NotFound(w, r)
	}
}

// handOver runs serve, which passes a message to a session, unless the
// handler is shutting down and the message could start new work (anything
// but a response to our own request). It reports whether serve ran.
func (h *Handler) handOver(response bool, serve func()) bool {
	h.gate.RLock()
	defer h.gate.RUnlock()
	if h.closing && !response {
		return false
	}
	serve()
	return true
}

func (h *Handler) isClosing() bool {
	h.gate.RLock()
	defer h.gate.RUnlock()
	return h.closing
}

// newSessionID returns 26 characters of base32 (130 random bits): visible
// ASCII, as the spec requires, and unguessable.
func newSessionID() string { return rand.Text() }

// lookup returns the session sid and marks it busy (see
// httpSession.leave), or nil when there is no such session or it belongs
// to another identity than r's (see Handler.owns).
func (h *Handler) lookup(r *http.Request, sid string) *httpSession {
	h.mu.Lock()
	hs := h.sessions[sid]
	h.mu.Unlock()
	if hs == nil || !h.owns(hs.owner, r, sid) {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[sid] != hs {
		return nil // ended meanwhile
	}
	hs.enter()
	return hs
}

func (h *Handler) remove(hs *httpSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[hs.id] != hs {
		return false
	}
	delete(h.sessions, hs.id)
	return true
}

// expireLoop ends idle sessions until Close.
func (h *Handler) expireLoop() {
	defer h.janitor.Done()
	period := min(h.opts.SessionIdle/4, time.Minute)
	t := time.NewTicker(max(period, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			h.expire(now)
		case <-h.stop:
			return
		}
	}
}

// expire ends every session idle since before now-SessionIdle.
func (h *Handler) expire(now time.Time) {
	var idle []*httpSession
	h.mu.Lock()
	for id, hs := range h.sessions {
		if hs.idleSince(now.Add(-h.opts.SessionIdle)) {
			delete(h.sessions, id)
			idle = append(idle, hs)
		}
	}
	h.mu.Unlock()
	for _, hs := range idle {
		hs.log.Info("session expired", "idle", h.opts.SessionIdle)
		hs.end(endExpired)
	}
}

// Shutdown stops taking new work (new sessions and requests get 503;
// responses to the server's own requests are still accepted, so calls
// waiting on the client can finish), waits until the requests in flight
// have finished and their responses have been queued, or until ctx is
// done, and then ends every session, which closes every stream after what
// is queued on it. It returns ctx's error if requests were cut short.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.gate.Lock()
	h.closing = true
	h.gate.Unlock()
	if h.testHookClosing != nil {
		h.testHookClosing()
	}
	h.mu.Lock()
	waits := make([]*host.Conn, 0, len(h.sessions)+len(h.legacy))
	for _, hs := range h.sessions {
		waits = append(waits, hs.conn)
	}
	for _, ls := range h.legacy {
		waits = append(waits, ls.conn)
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { // ends at the latest when Close below ends the sessions
		for _, s := range waits {
			s.Wait()
		}
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		h.log.Warn("requests still in flight at the shutdown deadline; cancelling them")
	}
	h.Close()
	return err
}

// Close ends every session at once (requests in flight are cancelled and
// streams closed) and stops the expiry goroutine. It is idempotent.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		h.gate.Lock()
		h.closing = true
		h.gate.Unlock()
		close(h.stop)
		h.janitor.Wait()
		h.mu.Lock()
		sessions, legacy := h.sessions, h.legacy
		h.sessions, h.legacy = map[string]*httpSession{}, map[string]*legacySession{}
		h.mu.Unlock()
		var wg sync.WaitGroup
		for _, hs := range sessions {
			wg.Go(func() { hs.end(endShutdown) })
		}
		for _, ls := range legacy {
			wg.Go(ls.end)
		}
		wg.Wait()
	})
}

// Serve serves srv's HTTP transports on ln until ctx is done,
// then shuts down: it refuses new sessions and requests (503), lets the
// requests in flight finish (at most host.Options.ShutdownGrace; answers to the
// server's own requests are still accepted), closes the streams and the
// listener, and returns nil. It returns an error only if serving fails. The caller creates ln,
// so it knows the address (port 0 works) and decides where to bind;
// 127.0.0.1 is the safe choice.
func Serve(ctx context.Context, srv *host.Server, ln net.Listener, opts Options) error {
	return NewHandler(srv, opts).serve(ctx, ln)
}

func (h *Handler) serve(ctx context.Context, ln net.Listener) error {
	srv := h.srv
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute, // no ReadTimeout: it would cut SSE streams
		ErrorLog:          slog.NewLogLogger(srv.Logger().Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		h.Close()
		return fmt.Errorf("http: serve: %w", err)
	case <-ctx.Done():
	}
	h.drain(ctx, hs)
	grace := srv.ShutdownGrace()
	h.log.Info("shutting down: refusing new requests, answering those in flight", "grace", grace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	// The listener stays open while requests drain: a call waiting for the
	// client (sampling, elicitation) finishes only if the client's answer,
	// likely on a new connection, still gets in. New work gets 503.
	_ = h.Shutdown(sctx)
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: serve: %w", err)
	}
	return nil
}

// drain keeps serving for Options.DrainGrace while /readyz answers 503,
// so that a balancer probing it stops sending new work before Shutdown
// refuses it; requests that still arrive are served as before. Keep-alive
// ends meanwhile: each connection closes after its response, so none is
// left idle for a balancer to send a request on as the listener closes.
// Nothing watches /readyz when it was never probed: then there is no
// drain.
func (h *Handler) drain(ctx context.Context, hs *http.Server) {
	grace := h.opts.DrainGrace
	switch {
	case grace <= 0:
		return
	case !h.probed.Load():
		h.log.Info("no drain: /readyz was never probed, so no balancer is waiting for it to fail", "drain_grace", grace)
		return
	}
	h.draining.Store(true)
	hs.SetKeepAlivesEnabled(false)
	h.log.Info("draining: /readyz answers 503 while requests are still served", "drain_grace", grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.testHookDrainEnd:
	}
}

// httpError writes an HTTP error whose body is a JSON-RPC error without
// an id, as the reference SDK does.
func httpError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.AppendError(nil, nil, &jsonrpc.Error{Code: code, Message: message}))
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	httpError(w, http.StatusMethodNotAllowed, codeHTTP, "Method Not Allowed")
}

// cors lets a browser page from an allowed origin read the responses.
func cors(w http.ResponseWriter, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
	h.Add("Vary", "Origin")
}

// preflight answers a browser's OPTIONS: the request headers a client
// sends are allowed, those of the stateless era (Mcp-Method, Mcp-Name and
// the Mcp-Param-* it asks for) included; a page that cannot send them
// falls back to an older era.
func preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	allow := "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, " + hdrMethod + ", " + hdrName
	for _, v := range r.Header.Values("Access-Control-Request-Headers") {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if len(name) > len(hdrParam) && strings.EqualFold(name[:len(hdrParam)], hdrParam) && validHeaderName(name) {
				allow += ", " + name
			}
		}
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// validHeaderName reports whether s is an HTTP token (RFC 9110), so it
// can be echoed in a header value.
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// shortID is the part of a session id that may appear in logs: the whole
// id is a credential for the session.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
