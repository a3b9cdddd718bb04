package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
)

// clientState is what initialize established. It never changes afterwards.
type clientState struct {
	version protocol.Version
	caps    clientCaps
	info    json.RawMessage // clientInfo as sent
	level   int32           // stateless requests: log level + 1 from _meta; 0 means none
}

// session is one client connection's protocol state, independent of the
// transport: the transport feeds it whole messages through handle and
// receives everything it sends through outbound.
type session struct {
	srv *Server
	id  string
	out Outbound
	log *slog.Logger

	state     atomic.Pointer[clientState] // nil until initialize
	stateless bool                        // every request is stateless (HTTP without a session)
	principal string                      // stateless HTTP: who is asking, for task ownership (taskcall.go)
	ready     atomic.Bool                 // notifications/initialized received
	// early is what this session was answered before the initial load
	// was done (changes.go): the load's changes are news to it only.
	early earlyMarks
	level atomic.Int32 // logging level + 1; 0 means no level set

	mu       sync.Mutex
	inflight map[string]*request   // by raw id: concurrent requests being served
	pending  map[string]chan reply // by raw id: our requests awaiting the client
	subs     map[string]struct{}   // subscribed resource URIs
	nextID   int64                 // ids of server→client requests
	gone     bool                  // the client can no longer answer
	goneCh   chan struct{}         // closed when gone is set: listens end

	wg      sync.WaitGroup // requests in flight and batch collectors
	workers *pool[task]    // runs concurrent requests (inflight.go)

	closeOnce sync.Once
}

// param returns the member name of the request's params: from the
// members the codec read with the message (every request's), without
// walking params (and a tool's arguments inside it) again.
func (req *request) param(name string) json.RawMessage { return req.members.Get(name) }

// request is one client request being served. For concurrent requests it
// is also the Peer of the plugin call (see peer.go).
type request struct {
	sess     *session
	id       json.RawMessage
	method   string
	params   json.RawMessage
	members  jsonrpc.Members // params' members, read with the message (nil: walk params)
	serverID string          // the gateway's top-level "server_id"
	state    *clientState    // stateless requests: from _meta; nil: the session's
	input    *inputRound     // stateless requests that may ask for input (inputrequired.go)
	hints    *cacheHints     // stateless results: ttlMs and cacheScope chosen by the handler (nil: the server's)
	// served is the plugin whose code answers (tools/call, resources/read,
	// prompts/get, tasks/get): set by the handler, on the goroutine that
	// then replies, for the audit record of the answer.
	served *plugins.Plugin

	cancel    context.CancelFunc // nil for requests served in order
	routed    bool               // serverID was given (beside the other flags: a request fits 256 bytes)
	cancelled bool               // guarded by sess.mu
	done      atomic.Bool        // answered (or dropped): the Peer sends no more
}

// reply is a client's answer to one of our requests.
type reply struct {
	result json.RawMessage
	err    error
}

func (srv *Server) newSession(out Outbound, id string) *session {
	s := &session{
		srv:      srv,
		id:       id,
		out:      out,
		log:      srv.log.With("session", id),
		inflight: make(map[string]*request),
		pending:  make(map[string]chan reply),
		subs:     make(map[string]struct{}),
		goneCh:   make(chan struct{}),
	}
	s.workers = newPool(s.run, maxIdleWorkers)
	srv.addSession(s)
	return s
}

// version returns the negotiated version, or 0 before initialize.
func (s *session) version() protocol.Version {
	if st := s.state.Load(); st != nil {
		return st.version
	}
	return 0
}

// version returns the request's protocol version: its own in the
// stateless era, the session's otherwise.
func (req *request) version() protocol.Version {
	if req.state != nil {
		return req.state.version
	}
	return req.sess.version()
}

// clientState returns what the request is served with, or nil before
// initialize.
func (req *request) clientState() *clientState {
	if req.state != nil {
		return req.state
	}
	return req.sess.state.Load()
}

// admits reports whether a log message at level goes to the client of
// this request: in the stateless era only when its _meta set a level.
func (req *request) admits(level string) bool {
	if req.state == nil {
		return req.sess.admits(level)
	}
	l, ok := parseLevel(level)
	return ok && req.state.level != 0 && l+1 >= req.state.level
}

// handle serves one incoming message (or batch) on the session's workers.
// ctx bounds every request it starts; cancelling it cancels them and
// suppresses their responses. The session keeps raw: the caller must not
// modify it afterwards.
func (s *session) handle(ctx context.Context, raw []byte) {
	if t, ok := s.handleMessage(ctx, raw, nil); ok {
		s.workers.queue(t)
	}
}

// handleMessage serves one incoming message, or a batch, whose answer
// array is sent with related key batchKey (see outbound): Streamable HTTP
// passes a key of its own per POST, to find the connection the array
// belongs on; stdio passes nil. What is cheap is served at once; a single
// concurrent request is tracked and returned, for the caller to run where
// it chooses (see inflight.go); a batch's are queued to the workers.
func (s *session) handleMessage(ctx context.Context, raw []byte, batchKey json.RawMessage) (t task, ok bool) {
	defer func() { // handlers recover on their own; this guards everything else
		if r := recover(); r != nil {
			s.log.Error("message handling panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	s.srv.audit.record(s.id, "in", CallerOf(ctx), nil, raw)
	if jsonrpc.IsBatch(raw) {
		s.handleBatch(ctx, raw, batchKey)
		return task{}, false
	}
	msg, err := jsonrpc.Decode(raw)
	if err != nil {
		s.reject(&msg, err, nil, 0)
		return task{}, false
	}
	return s.dispatch(ctx, &msg, nil, 0)
}

// reject answers a message that failed to decode, unless it was a
// notification or a response, which are never answered.
func (s *session) reject(msg *jsonrpc.Message, err *jsonrpc.Error, b *batch, slot int) {
	if msg.Kind == jsonrpc.KindNotification || msg.Kind == jsonrpc.KindResponse {
		s.log.Debug("dropped malformed message", "err", err.Message)
		return
	}
	s.reply(msg.ID, nil, err, b, slot)
}

// dispatch serves msg, except a concurrent request, which it tracks and
// returns to be run (see inflight.go).
func (s *session) dispatch(ctx context.Context, msg *jsonrpc.Message, b *batch, slot int) (task, bool) {
	switch msg.Kind {
	case jsonrpc.KindResponse:
		s.deliver(msg)
	case jsonrpc.KindNotification:
		s.notification(ctx, msg)
	case jsonrpc.KindRequest:
		return s.request(ctx, msg, b, slot)
	}
	return task{}, false
}

// request serves a client request: a cheap method (inline) at once, in
// order, on the caller's goroutine; any other is tracked, so that a
// notifications/cancelled read after it finds it, and returned to be run.
func (s *session) request(ctx context.Context, msg *jsonrpc.Message, b *batch, slot int) (task, bool) {
	m := s.srv.methods[string(msg.Method)]
	var st *clientState
	if s.state.Load() == nil && !protocol.IsHandshakeInitialize(msg) &&
		(s.stateless || protocol.HasStatelessMeta(msg.ParamMembers.Get("_meta")) || m != nil && m.era == eraStateless) {
		var err error
		if st, err = s.statelessRequest(m, msg); err != nil {
			s.reply(msg.ID, nil, err, b, slot)
			return task{}, false
		}
	} else {
		if m == nil || m.era == eraStateless {
			s.reply(msg.ID, nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", msg.Method), b, slot)
			return task{}, false
		}
		if !m.beforeInit && s.state.Load() == nil {
			s.reply(msg.ID, nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: server not initialized"), b, slot)
			return task{}, false
		}
	}
	req := &request{sess: s, id: msg.ID, method: m.name, params: msg.Params, members: msg.ParamMembers, state: st}
	if msg.ServerID != nil {
		req.serverID, _ = jsonrpc.Unquote(msg.ServerID)
		req.routed = true
	}
	if m.inline {
		res, err := s.invoke(ctx, m, req)
		req.done.Store(true)
		s.answer(req, res, err, b, slot)
		return task{}, false
	}
	return s.start(ctx, m, req, b, slot)
}

// deliver routes a client's response to the server→client request waiting
// for it.
func (s *session) deliver(msg *jsonrpc.Message) {
	s.mu.Lock()
	ch := s.pending[string(msg.ID)]
	delete(s.pending, string(msg.ID))
	s.mu.Unlock()
	if ch == nil {
		s.log.Debug("response to no pending request", "id", string(msg.ID))
		return
	}
	if msg.Error == nil {
		ch <- reply{result: msg.Result}
		return
	}
	ce := &ClientError{Code: jsonrpc.CodeInternal, Message: "malformed error response"}
	if err := json.Unmarshal(msg.Error, ce); err != nil {
		ce.Message = "malformed error response: " + string(msg.Error)
	}
	ch <- reply{err: ce}
}

// clientGone fails every pending server→client request and refuses new
// ones: the client can no longer answer (stdin reached EOF).
func (s *session) clientGone() {
	s.mu.Lock()
	if !s.gone {
		close(s.goneCh)
	}
	s.gone = true
	pending := s.pending
	s.pending = make(map[string]chan reply)
	s.mu.Unlock()
	for _, ch := range pending {
		ch <- reply{err: ErrClosed}
	}
}

// drain waits up to grace for the requests in flight to finish and reports
// whether they did.
func (s *session) drain(grace time.Duration) bool {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// close ends the session once its requests have been cancelled: it waits
// for their goroutines and stops all server-initiated traffic.
// close is idempotent.
func (s *session) close() {
	s.closeOnce.Do(func() {
		s.clientGone()
		s.wg.Wait()
		s.workers.close()
		s.srv.removeSession(s)
	})
}

// subscribed reports whether the client subscribed to uri.
func (s *session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.subs[uri]
	return ok
}

// tooLarge answers a message that exceeded the size limit, with its id
// when that could be read from the message's first bytes.
func (s *session) tooLarge(n, limit int64, id []byte) {
	s.srv.audit.record(s.id, "in", nil, nil, []byte(fmt.Sprintf("<message of %d bytes discarded>", n)))
	s.reply(id, nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: message too large: %d bytes exceeds the limit of %d", n, limit), nil, 0)
}
