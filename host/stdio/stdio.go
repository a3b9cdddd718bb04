package stdio

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
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
		readErr <- readLoop(rctx, conn, &stopReader{r: in, stop: ctx.Done()}, srv.MaxMessageBytes())
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
// A line over max is answered and reading goes on. It is the connection's
// one reader: conn serves cheap requests on it, in order, and queues every
// other to its workers (see host.Conn.Handle), so a slow tool never stops
// the next line, a cancellation or an answer to our own request, from
// being read.
func readLoop(ctx context.Context, conn *host.Conn, in io.Reader, max int64) error {
	r := jsonrpc.NewLineReader(in, max)
	for {
		line, err := r.Next()
		if tooLong, ok := err.(*jsonrpc.TooLargeError); ok {
			conn.TooLarge(tooLong.N, max, jsonrpc.PeekID(tooLong.Head))
			err = nil
		} else if len(line) > 0 && ctx.Err() == nil {
			conn.Handle(ctx, line)
			if !r.Ready() {
				// Next will block in read(2), which keeps this P: let
				// the worker Handle just woke run on it first.
				runtime.Gosched()
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("stdio: read: %w", err)
		case ctx.Err() != nil:
			return nil
		}
	}
}

var _ host.Outbound = (*writer)(nil)

// writer writes each message and its newline in one locked Write, so
// messages never interleave. After the first failed write (the client went
// away) it cancels the session and drops everything.
type writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte // the message being written and its newline
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
	if len(msg) > 64<<10 {
		// Two writes under the lock rather than a copy of megabytes.
		if _, err := w.w.Write(msg); err != nil {
			w.fail(err)
		} else if _, err := w.w.Write(newline); err != nil {
			w.fail(err)
		}
		return w.err
	}
	w.buf = append(append(w.buf[:0], msg...), '\n')
	if _, err := w.w.Write(w.buf); err != nil {
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
