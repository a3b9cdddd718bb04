package stdio

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/jsonrpc"
)

// Serve serves one session of srv over newline-delimited JSON: messages are
// read from in and written to out, one per line, and nothing else is ever
// written to out.
//
// Serve ends the same way when in reaches EOF and when ctx is done (the
// process was asked to stop): it stops reading, fails the plugins' pending
// requests to the client (which can no longer answer), lets the requests in
// flight finish and send their responses (at most drainTime, then they are
// cancelled and get none), and returns nil. This is what makes
// `echo '{…"tools/call"…}' | mcphost` work, and a SIGTERM answer the calls
// it interrupts. Lines read before ctx was done are still served; nothing
// read after. It returns an error only when reading or writing fails; a
// failed write (the client went away) cancels the requests at once, since
// their answers can go nowhere. The goroutine reading in may outlive the
// call until in returns from its last Read (closing in releases it).
func Serve(ctx context.Context, srv *host.Server, in io.Reader, out io.Writer) error {
	// The requests' context: ctx ending stops reading, not the requests.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	w := &writer{w: out, failed: cancel}
	conn := srv.Connect(w, host.ConnInfo{ID: "stdio-" + rand.Text()[:8]})
	log := conn.Logger()
	log.Info("session started", "transport", "stdio")
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLoop(rctx, conn, &stopReader{r: in, stop: ctx.Done()}, srv.MaxMessageBytes(), w)
	}()

	var err error
	select {
	case err = <-readErr:
	case <-ctx.Done():
	case <-rctx.Done(): // a write failed
	}
	if rctx.Err() == nil {
		grace := drainTime(srv)
		if ctx.Err() != nil {
			log.Info("shutting down: reading no more requests, answering those in flight", "grace", grace)
		}
		conn.ClientGone()
		if !conn.Drain(grace) {
			log.Warn("requests still in flight at the end of the shutdown grace; cancelling them unanswered",
				"grace", grace, "key", "shutdown_grace in [server]")
		}
	}
	cancel()
	conn.Close()
	w.close()
	log.Info("session ended")
	if werr := w.failure(); werr != nil && err == nil {
		err = werr
	}
	return err
}

// stopReader is in as Serve reads it: once stop is closed, it reads no
// more, and what a Read blocked at that moment returns is dropped.
type stopReader struct {
	r    io.Reader
	stop <-chan struct{}
}

func (s *stopReader) Read(p []byte) (int, error) {
	select {
	case <-s.stop:
		return 0, io.EOF
	default:
	}
	n, err := s.r.Read(p)
	select {
	case <-s.stop:
		return 0, io.EOF
	default:
		return n, err
	}
}

// drainTime is how long requests in flight may take once reading stops:
// the server's shutdown grace, plus what is left of the startup wait while
// the initial load is still running, because a request may be waiting for
// it (a cold start building plugins from source takes longer than the
// grace).
func drainTime(srv *host.Server) time.Duration { return srv.ShutdownGrace() + srv.StartupLeft() }

// readLoop feeds each line of in to conn until EOF (nil) or a read error.
// A line over max is answered and reading goes on.
//
// The goroutine that reads a request serves it itself (leader/follower),
// so a tools/call's answer never waits for a worker to be scheduled.
// Before serving, it hands reading to a parked follower, or a new
// goroutine, so requests in flight never stop the next line from being
// read; but a request that is usually quick (see host.Conn.HandleLeading)
// is served first, and reading goes on with no goroutine switch at all,
// unless it is still running after handoffAfter. One goroutine reads at a
// time; the one that meets the end of in returns its result. While more
// lines are buffered, their answers are held and written together (see
// writer.hold).
func readLoop(ctx context.Context, conn *host.Conn, in io.Reader, max int64, w *writer) error {
	l := &lineLoop{conn: conn, r: jsonrpc.NewLineReader(in, max), max: max, w: w, turn: make(chan struct{}), end: make(chan error, 1)}
	// On its own goroutine: the first leader may park as a follower, and
	// the result must still come back when another leader meets the end.
	go l.lead(ctx)
	return <-l.end
}

// handoffAfter is how long a quick request is served on the reading
// goroutine before reading passes to another: only when a request that is
// usually quick turns out slow. Go's timers fire late: a 100 µs timer
// fired after 1.1 ms (p50) with every P idle, and after 1.3 ms (p50, at
// most 5.3 ms) with its P busy (measured on 2 cores), so that is the real
// bound on how long such a request delays the next line.
const handoffAfter = 100 * time.Microsecond

// maxFollowers bounds the goroutines parked waiting to read again.
const maxFollowers = 8

type lineLoop struct {
	conn *host.Conn
	r    *jsonrpc.LineReader
	max  int64
	w    *writer
	turn chan struct{} // a parked follower receives the lead from it
	idle atomic.Int32  // followers parked on turn
	end  chan error    // the result of reading, once
}

// lead reads and handles lines until the end of input, or until it has
// passed reading on and, after serving its request, finds no lead to take.
func (l *lineLoop) lead(ctx context.Context) {
	var h *handoff // this goroutine's, made on its first request
	for {
		line, err := l.r.Next()
		more := l.r.Ready() // whether the next Next returns without reading
		led := false
		if tooLong, ok := err.(*jsonrpc.TooLargeError); ok {
			l.conn.TooLarge(tooLong.N, l.max, jsonrpc.PeekID(tooLong.Head))
			err = nil
		} else if len(line) > 0 && ctx.Err() == nil {
			if err == nil {
				if h == nil {
					h = l.newHandoff(ctx)
				}
				if more {
					l.w.hold() // more requests are waiting: answer them together
				}
				led = l.conn.HandleLeading(ctx, line, h.arm) && !h.keep()
			} else {
				l.conn.Handle(ctx, line) // the last line: nothing to pass on
			}
		}
		if led { // reading was passed on: l.r is another goroutine's now
			if !l.follow(ctx) {
				return
			}
			continue
		}
		if !more {
			l.w.release() // Next may block: nothing is held meanwhile
		}
		if err == io.EOF {
			l.end <- nil
			return
		}
		if err != nil {
			l.end <- fmt.Errorf("stdio: read: %w", err)
			return
		}
		if ctx.Err() != nil {
			l.end <- nil
			return
		}
	}
}

// handoff passes reading on if the request being served on the reading
// goroutine takes longer than handoffAfter. Its timer is made once per
// goroutine and re-armed for each request.
type handoff struct {
	l     *lineLoop
	ctx   context.Context // the session's, for the goroutines reading goes to
	t     *time.Timer
	state atomic.Int32 // handoffIdle, handoffArmed or handoffFired
}

const (
	handoffIdle = iota
	handoffArmed
	handoffFired
)

func (l *lineLoop) newHandoff(ctx context.Context) *handoff {
	h := &handoff{l: l, ctx: ctx}
	h.t = time.AfterFunc(time.Hour, func() {
		// A late firing from an earlier arming only passes reading on
		// early, which is always safe.
		if h.state.CompareAndSwap(handoffArmed, handoffFired) {
			l.w.release()
			l.pass(ctx)
		}
	})
	h.t.Stop()
	return h
}

// arm is the lead func given to HandleLeading: the request is about to be
// served on this goroutine. A request that is not quick (see
// host.Conn.HandleLeading) hands reading over at once; a quick one keeps
// it unless still running after handoffAfter.
func (h *handoff) arm(quick bool) {
	if !quick {
		h.state.Store(handoffFired)
		h.l.w.release()
		h.l.pass(h.ctx)
		return
	}
	h.state.Store(handoffArmed)
	h.t.Reset(handoffAfter)
}

// keep reports whether the request was answered before reading was passed
// on, in which case this goroutine goes on reading.
func (h *handoff) keep() bool {
	if h.state.CompareAndSwap(handoffArmed, handoffIdle) {
		h.t.Stop()
		return true
	}
	h.state.Store(handoffIdle)
	return false
}

// pass gives reading to a parked follower, or to a new goroutine.
func (l *lineLoop) pass(ctx context.Context) {
	select {
	case l.turn <- struct{}{}:
	default:
		go l.lead(ctx)
	}
}

// follow parks the caller until it is given the lead (true), or until the
// session ends or enough followers are parked already (false).
func (l *lineLoop) follow(ctx context.Context) bool {
	if l.idle.Add(1) > maxFollowers {
		l.idle.Add(-1)
		return false
	}
	defer l.idle.Add(-1)
	select {
	case <-l.turn:
		return true
	case <-ctx.Done():
		return false
	}
}

var _ host.Outbound = (*writer)(nil)

// writer writes each message and its newline in one locked Write, so
// messages never interleave. While held (see hold), messages collect and
// go out in one Write on release. After the first failed write (the client
// went away) it cancels the session and drops everything.
type writer struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte // messages not yet written
	holding bool
	err     error
	closed  bool
	failed  func()
}

func (w *writer) Send(msg []byte, _ json.RawMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("stdio: session closed")
	}
	if w.err != nil {
		return w.err
	}
	if len(msg) > 64<<10 {
		// Two writes under the lock rather than a copy of megabytes,
		// after what is held (a call's progress goes before its answer).
		if w.flushLocked() == nil {
			if _, err := w.w.Write(msg); err != nil {
				w.fail(err)
			} else if _, err := w.w.Write(newline); err != nil {
				w.fail(err)
			}
		}
		return w.err
	}
	w.buf = append(append(w.buf, msg...), '\n')
	if w.holding && len(w.buf) < maxHeld {
		return nil
	}
	return w.flushLocked()
}

// maxHeld bounds what the writer holds: past it, what is held is written
// at once (a burst of large answers neither waits nor piles up).
const maxHeld = 64 << 10

// hold makes Send collect messages until release (or maxHeld bytes). The
// reading goroutine holds while more requests are buffered, so that their
// answers, which come in quick succession, cost the client one read rather
// than several.
func (w *writer) hold() {
	w.mu.Lock()
	w.holding = true
	w.mu.Unlock()
}

// release writes what was held and ends holding. The reading goroutine
// releases before it can block, and before it hands reading over.
func (w *writer) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holding = false
	if !w.closed && w.err == nil {
		w.flushLocked()
	}
}

func (w *writer) flushLocked() error {
	if len(w.buf) == 0 || w.err != nil {
		return w.err
	}
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	if err != nil {
		w.fail(err)
	}
	return w.err
}

func (w *writer) fail(err error) {
	w.err = fmt.Errorf("stdio: write: %w", err)
	w.failed()
}

var newline = []byte{'\n'}

func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

func (w *writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
