package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

// httpSession is one Streamable HTTP session: the protocol session (shared
// with stdio) plus its streams. Every message the session sends arrives at
// send with the id of the request it belongs to, and goes to that request's
// stream; the rest goes to the standalone stream that GET opens.
//
// Streams and SSE event ids. Stream 0 is the standalone stream; each POST
// that carries a request gets the next number. Each stream numbers its
// events 0, 1, 2, …, and an event's id is "<stream>-<number>": unique
// across the session, and it names the stream to resume. A POST's stream
// starts undecided: if the first message for it is the response, it is
// written as application/json and forgotten; otherwise the POST turns into
// an SSE stream, whose events are kept in the session's replay buffer
// (bounded) until evicted, so a client that lost the connection can resume
// with GET and Last-Event-ID, on that stream only.
type httpSession struct {
	h     *Handler
	id    string
	owner owner // who created it; nobody else may use it (principal.go)
	conn  *host.Conn
	log   *slog.Logger
	// serve hands a message that came with r to the session, under the
	// session's lifetime context carrying r's caller (auth.go); with st
	// (the POST stream its requests answer on), under a context of their
	// own that ends when st is finished or abandoned (see
	// httpSession.detach), and it returns the concurrent request it
	// started, if any, for the POST's goroutine to run (runHere).
	serve  func(r *http.Request, raw []byte, batchKey json.RawMessage, st *stream) (host.Job, bool)
	cancel context.CancelFunc // ends the lifetime context

	mu         sync.Mutex
	active     int       // HTTP handlers using the session now
	lastSeen   time.Time // when the last one returned
	ended      endReason // not endNone once the session is over
	nextStream int64
	standalone *stream
	streams    map[int64]*stream  // resumable: SSE streams still holding events
	byKey      map[string]*stream // open POST streams by request id (or batch key)
	ring       []event            // replay buffer (a ring), grown as events come up to maxEvents
	head, n    int
	bytes      int
	maxEvents  int
	maxBytes   int
}

type endReason uint8

const (
	endNone endReason = iota
	endDeleted
	endExpired
	endShutdown
)

type streamMode uint8

const (
	modeUndecided streamMode = iota // a POST waiting for its first message
	modeJSON                        // answered with application/json
	modeSSE
)

// stream is a logical SSE stream; at most one connection (conn) is
// attached to it at a time. All fields are guarded by httpSession.mu.
type stream struct {
	num      int64
	post     bool
	keys     []string // byKey entries, while open
	mode     streamMode
	json     []byte // the response, in modeJSON
	primeSeq int64  // the priming event's number; -1 if none
	nextSeq  int64
	conn     *conn
	finished bool // the response (or the news that there is none) is queued
	answered bool // finished with a response
	buffered int  // events of this stream in the replay buffer
	poll     *time.Timer
	// cancel ends the context of the POST's requests; orphan runs it if
	// the stream stays without a connection for Options.ResumeWindow.
	cancel context.CancelFunc
	orphan *time.Timer
}

// conn is one HTTP response carrying a stream.
type conn struct {
	wake     chan struct{} // capacity 1: something changed
	detached bool          // told to stop (poll, take-over, session end)
	// writer, while the POST's goroutine runs the stream's request itself
	// (httpSession.runHere), writes the response on a goroutine of its
	// own: the first signal that needs it (an event to write, a poll, a
	// take-over, the session's end) or the client's going away starts it,
	// once (carry goes from carryArmed to carryFired).
	writer func()
	carry  atomic.Int32
}

const (
	carryNone = iota
	carryArmed
	carryFired
)

func newConn() *conn { return &conn{wake: make(chan struct{}, 1)} }

// signal wakes the goroutine writing c, and starts it while the POST's
// goroutine is running the request itself.
func (c *conn) signal() {
	if c == nil {
		return
	}
	c.notify()
	c.fire()
}

// notify wakes the goroutine writing c without starting one: what changed
// is the end of the request (its answer as JSON, or none), which a POST's
// goroutine running the request itself finds when the request returns.
func (c *conn) notify() {
	if c == nil {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) fire() {
	if c.carry.CompareAndSwap(carryArmed, carryFired) {
		go c.writer() // ends with the response
	}
}

// event is one SSE event in the replay buffer. data is never modified.
type event struct {
	st   *stream
	seq  int64
	data []byte
}

func (h *Handler) newHTTPSession(stateless bool, o owner) *httpSession {
	id := newSessionID()
	hs := &httpSession{
		h:          h,
		id:         id,
		owner:      o,
		streams:    make(map[int64]*stream),
		byKey:      make(map[string]*stream),
		maxEvents:  h.opts.ReplayEvents,
		maxBytes:   h.opts.ReplayBytes,
		lastSeen:   time.Now(),
		nextStream: 1,
	}
	hs.standalone = &stream{num: 0, primeSeq: -1, mode: modeSSE}
	hs.streams[0] = hs.standalone
	hs.conn = h.srv.Connect(hs, host.ConnInfo{ID: "http-" + shortID(id), Stateless: stateless, Principal: o.key})
	hs.log = hs.conn.Logger()
	ctx, cancel := context.WithCancel(context.Background())
	hs.cancel = cancel
	conn := hs.conn
	hs.serve = func(r *http.Request, raw []byte, key json.RawMessage, st *stream) (host.Job, bool) {
		cctx := callerContext(ctx, r)
		if st == nil {
			conn.HandleKeyed(cctx, raw, key)
			return host.Job{}, false
		}
		rctx, cancel := context.WithCancel(cctx)
		hs.mu.Lock()
		st.cancel = cancel // before handling: the answer may come at once
		hs.mu.Unlock()
		return conn.Start(rctx, raw, key)
	}
	return hs
}

// enter and leave bracket every HTTP handler using the session, which is
// idle only when none is running.
func (hs *httpSession) enter() {
	hs.mu.Lock()
	hs.active++
	hs.mu.Unlock()
}

func (hs *httpSession) leave() {
	hs.mu.Lock()
	hs.active--
	hs.lastSeen = time.Now()
	hs.mu.Unlock()
}

func (hs *httpSession) idleSince(cutoff time.Time) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.active == 0 && hs.lastSeen.Before(cutoff)
}

// end finishes the session: requests in flight are cancelled (they send
// nothing more), every connection is told to stop after what is already
// queued, and the protocol session is closed. The caller has removed the
// session from the handler.
func (hs *httpSession) end(why endReason) {
	hs.cancel()
	hs.mu.Lock()
	if hs.ended != endNone {
		hs.mu.Unlock()
		return
	}
	hs.ended = why
	for _, st := range hs.byKey {
		hs.stopLocked(st)
	}
	for _, st := range hs.streams {
		hs.stopLocked(st)
	}
	hs.mu.Unlock()
	hs.conn.Close()
	hs.log.Info("session ended", "reason", why.String())
}

func (hs *httpSession) stopLocked(st *stream) {
	if st.poll != nil {
		st.poll.Stop()
	}
	if c := st.conn; c != nil {
		c.detached = true
		c.signal()
	}
}

func (r endReason) String() string {
	switch r {
	case endDeleted:
		return "deleted"
	case endExpired:
		return "expired"
	case endShutdown:
		return "shutdown"
	}
	return "none"
}

var errIDInUse = errors.New("id already in use by a request in flight")

// openPost registers the stream of a POST carrying requests under keys
// (their ids, and a batch's key), with c attached.
func (hs *httpSession) openPost(keys []string, c *conn) (*stream, error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.ended != endNone {
		return nil, errSessionEnded
	}
	for _, k := range keys {
		if hs.byKey[k] != nil {
			return nil, errIDInUse
		}
	}
	st := &stream{num: hs.nextStream, post: true, keys: keys, primeSeq: -1, conn: c}
	hs.nextStream++
	for _, k := range keys {
		hs.byKey[k] = st
	}
	if d := hs.h.opts.PollAfter; d > 0 && hs.conn.Version() >= protocol.V20251125 {
		st.poll = time.AfterFunc(d, func() { hs.pollClose(st) })
	}
	return st, nil
}

// abandon forgets a POST stream whose message was never handed over.
func (hs *httpSession) abandon(st *stream) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.finishLocked(st)
}

var errSessionEnded = errors.New("session ended")

// Send implements outbound: the message goes to the stream of the request
// it is related to, or to the standalone stream.
func (hs *httpSession) Send(msg []byte, related json.RawMessage) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.ended != endNone {
		return errSessionEnded
	}
	st := hs.standalone
	if related != nil {
		if s := hs.byKey[string(related)]; s != nil {
			st = s
		}
	}
	final := st.post && isResponse(msg)
	if st.mode == modeUndecided {
		if final {
			st.mode = modeJSON
			st.json = bytes.Clone(msg)
			st.answered = true
			hs.finishLocked(st)
			st.conn.notify()
			return nil
		}
		hs.toSSELocked(st)
	}
	hs.pushLocked(st, bytes.Clone(msg))
	if final {
		st.answered = true
		hs.finishLocked(st)
	}
	st.conn.signal()
	return nil
}

// The HTTP sessions are the way back of their Conns; Streamable HTTP holds
// a stream open per request, so it must hear of requests never answered.
var (
	_ host.Outbound = (*httpSession)(nil)
	_ host.Finisher = (*httpSession)(nil)
	_ host.Outbound = (*legacySession)(nil)
)

// Unanswered implements Finisher: the request related to key was
// cancelled, so its stream ends without a response.
func (hs *httpSession) Unanswered(key json.RawMessage) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	st := hs.byKey[string(key)]
	if st == nil {
		return
	}
	hs.finishLocked(st)
	st.conn.notify()
}

// finishLocked marks st as having all its messages: its keys are free
// again, it will not be polled, and its requests' context is released.
func (hs *httpSession) finishLocked(st *stream) {
	st.finished = true
	if st.cancel != nil {
		st.cancel()
	}
	if st.orphan != nil {
		st.orphan.Stop()
	}
	for _, k := range st.keys {
		if hs.byKey[k] == st {
			delete(hs.byKey, k)
		}
	}
	st.keys = nil
	if st.poll != nil {
		st.poll.Stop()
	}
	hs.forgetLocked(st)
}

// toSSELocked turns an undecided POST into an SSE stream, with a priming
// event for clients that understand one, and makes it resumable.
func (hs *httpSession) toSSELocked(st *stream) {
	st.mode = modeSSE
	if hs.conn.Version() >= protocol.V20251125 {
		st.primeSeq = st.nextSeq
		st.nextSeq++
	}
	hs.streams[st.num] = st
}

// pollClose is PollAfter's timer: the POST's connection is closed after a
// priming event (turning it into an SSE stream if it was not one), and the
// client comes back with GET and Last-Event-ID.
func (hs *httpSession) pollClose(st *stream) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if st.finished || st.conn == nil || hs.ended != endNone {
		return
	}
	if st.mode == modeUndecided {
		hs.toSSELocked(st)
	}
	st.conn.detached = true
	st.conn.signal()
}

// pushLocked appends an event to st, evicting the oldest events of the
// session beyond the buffer's bounds (the newest is always kept).
func (hs *httpSession) pushLocked(st *stream, data []byte) {
	for hs.n > 0 && (hs.n == hs.maxEvents || hs.bytes+len(data) > hs.maxBytes) {
		hs.evictLocked()
	}
	if hs.n == len(hs.ring) {
		hs.growLocked()
	}
	hs.ring[(hs.head+hs.n)%len(hs.ring)] = event{st: st, seq: st.nextSeq, data: data}
	hs.n++
	hs.bytes += len(data)
	st.nextSeq++
	st.buffered++
}

// growLocked doubles the replay buffer, up to maxEvents. It starts empty:
// most sessions (one call each, answered with JSON) buffer few events or
// none, and a full-size buffer for each would be most of what a session
// costs.
func (hs *httpSession) growLocked() {
	ring := make([]event, min(max(2*len(hs.ring), 8), hs.maxEvents))
	for i := range hs.n {
		ring[i] = hs.ring[(hs.head+i)%len(hs.ring)]
	}
	hs.ring, hs.head = ring, 0
}

func (hs *httpSession) evictLocked() {
	e := hs.ring[hs.head]
	hs.ring[hs.head] = event{}
	hs.head = (hs.head + 1) % len(hs.ring)
	hs.n--
	hs.bytes -= len(e.data)
	e.st.buffered--
	if e.st.conn != nil && !e.st.conn.detached {
		// A connection that has not written this event yet will miss
		// it; it is told so by the gap in event numbers.
		hs.log.Debug("replay buffer full: evicting an event", "stream", e.st.num, "event", e.seq)
	}
	hs.forgetLocked(e.st)
}

// forgetLocked drops a finished POST stream once nothing can be resumed
// from it: no events left and no connection.
func (hs *httpSession) forgetLocked(st *stream) {
	if st.post && st.finished && st.buffered == 0 && st.conn == nil {
		delete(hs.streams, st.num)
	}
}

// eventsAfter appends st's buffered events numbered after seq, in order.
func (hs *httpSession) eventsAfter(dst []event, st *stream, seq int64) []event {
	if st.buffered == 0 {
		return dst
	}
	for i := range hs.n {
		e := hs.ring[(hs.head+i)%len(hs.ring)]
		if e.st == st && e.seq > seq {
			dst = append(dst, e)
		}
	}
	return dst
}

// detach removes c from st (when it is still the attached connection).
//
// A POST stream left without a connection before its answer was abandoned
// by its client (or closed by PollAfter). Its requests are cancelled: at
// once when it never turned into an SSE stream, since the client holds no
// event id to resume it with; otherwise once ResumeWindow has passed
// without a GET resuming it with Last-Event-ID, which the spec allows a
// client that lost its connection.
func (hs *httpSession) detach(st *stream, c *conn) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if st.conn != c {
		return
	}
	st.conn = nil
	hs.forgetLocked(st)
	if !st.post || st.finished || st.cancel == nil || hs.ended != endNone {
		return
	}
	if st.mode != modeSSE {
		hs.log.Info("client went away before the answer: cancelling the request", "stream", st.num, "requests", st.keys)
		st.cancel()
		return
	}
	if st.orphan == nil {
		st.orphan = time.AfterFunc(hs.h.opts.ResumeWindow, func() { hs.orphaned(st) })
	} else {
		st.orphan.Reset(hs.h.opts.ResumeWindow)
	}
}

// orphaned is the ResumeWindow timer of a POST stream left without a
// connection: unless one came back, its requests are cancelled.
func (hs *httpSession) orphaned(st *stream) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if st.conn != nil || st.finished || hs.ended != endNone {
		return
	}
	hs.log.Info("client went away and did not resume the stream: cancelling the request",
		"stream", st.num, "requests", st.keys, "resume_window", hs.h.opts.ResumeWindow)
	st.cancel()
}

// attachStandalone attaches c to the standalone stream, unless another
// connection is attached (409). It returns the priming event's number
// (-1 if none) and the number after which events are new.
func (hs *httpSession) attachStandalone(c *conn) (prime, after int64, ok bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	st := hs.standalone
	if st.conn != nil || hs.ended != endNone {
		return 0, 0, false
	}
	st.conn = c
	prime = -1
	if hs.conn.Version() >= protocol.V20251125 {
		prime = st.nextSeq
		st.nextSeq++
	}
	return prime, st.nextSeq - 1, true
}

// resume attaches c to the stream named by an event id, taking over from
// a connection still attached (the client would not resume a stream it
// still reads). It returns nil when the stream is unknown or gone.
func (hs *httpSession) resume(num int64, c *conn) *stream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	st := hs.streams[num]
	if st == nil || hs.ended != endNone {
		return nil
	}
	if old := st.conn; old != nil {
		old.detached = true
		old.signal()
	}
	st.conn = c
	if st.orphan != nil {
		st.orphan.Stop()
	}
	return st
}

// appendEventID appends the id of event seq of stream num.
func appendEventID(dst []byte, num, seq int64) []byte {
	dst = strconv.AppendInt(dst, num, 10)
	dst = append(dst, '-')
	return strconv.AppendInt(dst, seq, 10)
}

// parseEventID reads an id made by appendEventID.
func parseEventID(s string) (num, seq int64, ok bool) {
	a, b, found := bytes.Cut([]byte(s), []byte{'-'})
	if !found || !isDigits(a) || !isDigits(b) {
		return 0, 0, false
	}
	num, err1 := strconv.ParseInt(string(a), 10, 64)
	seq, err2 := strconv.ParseInt(string(b), 10, 64)
	return num, seq, err1 == nil && err2 == nil
}

func isDigits(b []byte) bool {
	if len(b) == 0 || len(b) > 18 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isResponse reports whether msg, as the session encodes messages, is a
// response (or a batch's array of responses) rather than a request or a
// notification.
func isResponse(msg []byte) bool {
	if len(msg) > 0 && msg[0] == '[' {
		return true
	}
	rest, ok := bytes.CutPrefix(msg, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		m, _ := jsonrpc.Decode(msg)
		return m.Kind == jsonrpc.KindResponse
	}
	end, err := jsonscan.ScanValue(rest, 0, 0)
	return err == nil && !bytes.HasPrefix(rest[end:], []byte(`,"method"`))
}
