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

// drainGrace bounds how long Serve waits, after stdin reaches EOF, for
// the requests still in flight before it cancels them. Plugin calls have
// their own time limits, so this only matters for a misbehaving one.
const drainGrace = 10 * time.Second

// Serve serves one session of srv over newline-delimited JSON: messages are
// read from in and written to out, one per line, and nothing else is ever
// written to out.
//
// When in reaches EOF, Serve stops reading, fails the plugins' pending
// requests to the client (which can no longer answer), lets the requests in
// flight finish and send their responses (at most drainTime, then they are
// cancelled), and returns nil. This is what makes
// `echo '{…"tools/call"…}' | mcphost` work. When ctx is done it cancels the
// requests in flight at once, sends nothing more and returns nil: both are
// normal ways to end a stdio server. It returns an error only when reading
// or writing fails. The goroutine reading in may outlive the call until in
// returns from its last Read (closing in releases it).
func Serve(ctx context.Context, srv *host.Server, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &writer{w: out, failed: cancel}
	conn := srv.Connect(w, host.ConnInfo{ID: "stdio-" + rand.Text()[:8]})
	log := conn.Logger()
	log.Info("session started", "transport", "stdio")
	readErr := make(chan error, 1)
	go func() { readErr <- readLoop(ctx, conn, in, srv.MaxMessageBytes()) }()

	var err error
	select {
	case err = <-readErr:
		conn.ClientGone()
		if !conn.Drain(drainTime(srv)) {
			log.Warn("requests still in flight after stdin closed; cancelling them")
		}
	case <-ctx.Done():
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

// drainTime is how long requests in flight may take after stdin closes:
// drainGrace, plus what is left of the startup wait while the initial load
// is still running, because a request may be waiting for it (a cold start
// building plugins from source takes longer than drainGrace).
func drainTime(srv *host.Server) time.Duration { return drainGrace + srv.StartupLeft() }

// readLoop feeds each line of in to conn until EOF (nil) or a read error.
// A line over max is answered and reading goes on.
//
// Reading is passed between goroutines (leader/follower): the goroutine
// that reads a request hands reading to a parked follower, or a new one,
// and serves the request itself, so a tools/call's answer never waits for
// a worker to be scheduled. One goroutine reads at a time; the one that
// meets the end of in returns its result.
func readLoop(ctx context.Context, conn *host.Conn, in io.Reader, max int64) error {
	l := &lineLoop{conn: conn, r: jsonrpc.NewLineReader(in, max), max: max, turn: make(chan struct{}), end: make(chan error, 1)}
	// On its own goroutine: the first leader may park as a follower, and
	// the result must still come back when another leader meets the end.
	go l.lead(ctx)
	return <-l.end
}

// maxFollowers bounds the goroutines parked waiting to read again.
const maxFollowers = 8

type lineLoop struct {
	conn *host.Conn
	r    *jsonrpc.LineReader
	max  int64
	turn chan struct{} // a parked follower receives the lead from it
	idle atomic.Int32  // followers parked on turn
	end  chan error    // the result of reading, once
}

// lead reads and handles lines until the end of input, or until it has
// passed reading on and, after serving its request, finds no lead to take.
func (l *lineLoop) lead(ctx context.Context) {
	pass := func() { l.pass(ctx) }
	for {
		line, err := l.r.Next()
		led := false
		if tooLong, ok := err.(*jsonrpc.TooLargeError); ok {
			l.conn.TooLarge(tooLong.N, l.max, jsonrpc.PeekID(tooLong.Head))
			err = nil
		} else if len(line) > 0 && ctx.Err() == nil {
			if err == nil {
				led = l.conn.HandleLeading(ctx, line, pass)
			} else {
				l.conn.Handle(ctx, line) // the last line: nothing to pass on
			}
		}
		if led {
			if !l.follow(ctx) {
				return
			}
			continue
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
// messages never interleave. After the first failed write (the client went
// away) it cancels the session and drops everything.
type writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	err    error
	closed bool
	failed func()
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
	var err error
	if len(msg) > 64<<10 {
		// Two writes under the lock rather than a copy of megabytes.
		if _, err = w.w.Write(msg); err == nil {
			_, err = w.w.Write(newline)
		}
	} else {
		w.buf = append(append(w.buf[:0], msg...), '\n')
		_, err = w.w.Write(w.buf)
	}
	if err != nil {
		w.err = fmt.Errorf("stdio: write: %w", err)
		w.failed()
		return w.err
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return nil
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
