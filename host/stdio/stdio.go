package stdio

import (
	"cmp"
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
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
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
	w := newWriter(out, cancel)
	conn := srv.Connect(w, host.ConnInfo{ID: "stdio-" + rand.Text()[:8]})
	log := conn.Logger()
	log.Info("session started", "transport", "stdio")
	readErr := make(chan error, 1)
	in = &stopReader{r: in, stop: ctx.Done(), before: w.release, yielded: time.Now()}
	l := &lineLoop{ctx: rctx, conn: conn, w: w, r: jsonrpc.NewLineReader(in, srv.MaxMessageBytes()), max: srv.MaxMessageBytes(), end: readErr}
	l.carry = l.run
	go l.run()

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
// more, and what a Read blocked at that moment returns is dropped. Before
// each Read it calls before (the writer's release), so that no answer is
// held while the reader may block.
type stopReader struct {
	r       io.Reader
	stop    <-chan struct{}
	before  func()
	yielded time.Time // when the reader last passed through the scheduler
}

// yieldAfter is how long the reader runs between two passes through the
// scheduler (runtime.Gosched). A goroutine that only ever blocks in
// read(2) never passes through it, so every 10 ms the runtime's monitor
// preempts it with a signal and then, having found work, wakes every
// 20 µs for a millisecond and more: ~2,000 wake-ups a second under a
// steady load, each a costly context switch on a virtual machine. A
// yield every few milliseconds (each wakes an idle thread once) keeps the
// monitor asleep.
const yieldAfter = 4 * time.Millisecond

func (s *stopReader) Read(p []byte) (int, error) {
	select {
	case <-s.stop:
		return 0, io.EOF
	default:
	}
	s.before()
	if time.Since(s.yielded) >= yieldAfter {
		runtime.Gosched()
		s.yielded = time.Now()
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

// lineLoop feeds each line of its input to conn until EOF or a read
// error, and sends the result to end. A line over max is answered and
// reading goes on. It is the connection's one reader. Each line is served
// through host.Conn.HandleHere: on the reading goroutine when no other
// request is in flight, which carries the loop on to a worker if the
// request turns out slow, so that a slow tool never stops the next line,
// a cancellation or an answer to our own request, from being read; on a
// worker otherwise. When more whole lines are buffered behind the one
// served (the client pipelines), the writer holds the answers until the
// next read, so that those of the batch leave together, in one write
// (see writer.hold).
type lineLoop struct {
	ctx   context.Context
	conn  *host.Conn
	w     *writer
	r     *jsonrpc.LineReader
	max   int64
	end   chan<- error
	carry func() // run, as a value made once
}

// run reads until the end of input, or until it has passed reading on.
func (l *lineLoop) run() {
	for {
		line, err := l.r.Next()
		if tooLong, ok := err.(*jsonrpc.TooLargeError); ok {
			l.conn.TooLarge(tooLong.N, l.max, jsonrpc.PeekID(tooLong.Head))
			err = nil
		} else if len(line) > 0 && l.ctx.Err() == nil {
			if err == nil && l.r.Ready() {
				l.w.hold(true) // released at the next read
			}
			if err != nil {
				l.conn.Handle(l.ctx, line)
			} else if !l.conn.HandleHere(l.ctx, line, l.carry) {
				return // reading went on elsewhere
			}
		}
		if err != nil || l.ctx.Err() != nil {
			l.w.release() // reading ends: nothing is held for a batch
		}
		switch {
		case err == io.EOF:
			l.end <- nil
			return
		case err != nil:
			l.end <- fmt.Errorf("stdio: read: %w", err)
			return
		case l.ctx.Err() != nil:
			l.end <- nil
			return
		}
	}
}

var _ host.Outbound = (*writer)(nil)

// writer writes each message and its newline so that messages never
// interleave, and combines the answers that finish together into one
// write: a Send that finds another Send writing appends its message and
// returns, and the writing Send writes everything appended meanwhile
// before it returns (a group commit). A lone answer is written at once,
// by its own Send, so combining costs it nothing; under load the client
// reads several answers per read(2), and a worker whose answer rides on
// another's write goes back to its queue at once. After the first failed
// write (the client went away) it cancels the session and drops
// everything.
type writer struct {
	mu      sync.Mutex
	done    sync.Cond // broadcast when writing ends
	w       io.Writer
	buf     []byte // messages appended while a Send is writing
	spare   []byte // the buffer last written, reused for the next batch
	writing bool   // a Send is writing (outside mu); what is appended, it writes too
	held    bool   // the reader serves a batch of lines: append, write at release
	err     error
	closed  bool
	failed  func()
}

func newWriter(out io.Writer, failed func()) *writer {
	w := &writer{w: out, failed: failed}
	w.done.L = &w.mu
	return w
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
	if len(msg) > maxCopied {
		// Written from msg rather than copied: wait for the Send that is
		// writing (which leaves buf empty) or write what is held, write
		// msg and its newline, then what was appended meanwhile.
		for w.writing || len(w.buf) > 0 {
			if !w.writing { // held messages go first
				w.writing = true
				w.flushLocked()
				continue
			}
			w.done.Wait()
		}
		if w.closed || w.err != nil {
			return cmp.Or(w.err, errors.New("stdio: session closed"))
		}
		w.writing = true
		w.mu.Unlock()
		_, err := w.w.Write(msg)
		if err == nil {
			_, err = w.w.Write(newline)
		}
		w.mu.Lock()
		if err != nil {
			w.fail(err)
		}
		w.flushLocked()
		return w.err
	}
	w.buf = append(append(w.buf, msg...), '\n')
	if w.writing || w.held {
		return nil // the Send that is writing, or the release, writes it next
	}
	w.writing = true
	w.flushLocked()
	return w.err
}

// maxCopied is the largest message Send copies to combine it with others;
// a larger one is written from the caller's bytes.
const maxCopied = 64 << 10

// flushLocked is called with mu held and writing set by the caller: it
// writes buf, without holding mu during each write, until nothing more
// was appended, then ends writing.
func (w *writer) flushLocked() {
	for len(w.buf) > 0 && w.err == nil {
		out := w.buf
		w.buf = w.spare[:0]
		w.mu.Unlock()
		_, err := w.w.Write(out)
		w.mu.Lock()
		if cap(out) <= 1<<20 {
			w.spare = out[:0]
		} else {
			w.spare = nil
		}
		if err != nil {
			w.fail(err)
		}
	}
	w.buf = w.buf[:0] // after a failure, nothing more is written
	w.writing = false
	w.done.Broadcast()
}

// hold sets whether Send holds the messages it is given (on) or writes
// them at once; turning it off writes what was held. The reader holds
// them from a line with more lines buffered behind it, as a pipelining
// client sends them, until its next read (stopReader releases before
// every Read), so that the answers of a batch leave in one write(2), as a
// single-threaded loop that flushes when its input buffer is empty would
// write them, and the client reads them in one read(2). Nothing is held
// while the reader may block; what is held waits only for the lines of
// the batch to be served, each bounded as a request run on the reader is
// (the pool's watchdog passes reading on, and so the release, after at
// most two ticks).
func (w *writer) hold(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == on {
		return
	}
	w.held = on
	if !on && !w.writing && len(w.buf) > 0 {
		w.writing = true
		w.flushLocked()
	}
}

// release writes what is held; see hold.
func (w *writer) release() { w.hold(false) }

func (w *writer) fail(err error) {
	w.err = fmt.Errorf("stdio: write: %w", err)
	w.failed()
}

var newline = []byte{'\n'}

// close refuses further messages once what is being written is written.
func (w *writer) close() {
	w.mu.Lock()
	w.held = false
	for w.writing || len(w.buf) > 0 && w.err == nil {
		if !w.writing {
			w.writing = true
			w.flushLocked()
			continue
		}
		w.done.Wait()
	}
	w.closed = true
	w.mu.Unlock()
}

func (w *writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
