package host

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// drainGrace bounds how long ServeStdio waits, after stdin reaches EOF, for
// the requests still in flight before it cancels them. Plugin calls have
// their own time limits, so this only matters for a misbehaving one.
const drainGrace = 10 * time.Second

// ServeStdio serves one session over newline-delimited JSON: messages are
// read from in and written to out, one per line, and nothing else is ever
// written to out.
//
// When in reaches EOF, ServeStdio stops reading, fails the plugins' pending
// requests to the client (which can no longer answer), lets the requests in
// flight finish and send their responses (at most drainTime, then they are
// cancelled), and returns nil. This is what makes
// `echo '{…"tools/call"…}' | mcphost` work. When ctx is done it cancels the
// requests in flight at once, sends nothing more and returns nil: both are
// normal ways to end a stdio server. It returns an error only when reading
// or writing fails. The goroutine reading in may outlive the call until in
// returns from its last Read (closing in releases it).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &stdioWriter{w: out, failed: cancel}
	sess := s.newSession(w, "stdio-"+rand.Text()[:8])
	sess.log.Info("session started", "transport", "stdio")
	readErr := make(chan error, 1)
	go func() { readErr <- s.readLoop(ctx, sess, in) }()

	var err error
	select {
	case err = <-readErr:
		sess.clientGone()
		if !sess.drain(s.drainTime()) {
			sess.log.Warn("requests still in flight after stdin closed; cancelling them")
		}
	case <-ctx.Done():
	}
	cancel()
	sess.close()
	w.close()
	sess.log.Info("session ended")
	if werr := w.failure(); werr != nil && err == nil {
		err = werr
	}
	return err
}

// drainTime is how long requests in flight may take after stdin closes:
// drainGrace, plus what is left of the startup wait while the initial load
// is still running, because a request may be waiting for it (a cold start
// building plugins from source takes longer than drainGrace).
func (s *Server) drainTime() time.Duration {
	select {
	case <-s.reg.Ready():
		return drainGrace
	default:
		return drainGrace + max(0, time.Until(s.readyBy))
	}
}

// readLoop feeds each line of in to sess until EOF (nil) or a read error.
func (s *Server) readLoop(ctx context.Context, sess *session, in io.Reader) error {
	r := lineReader{br: bufio.NewReaderSize(in, 64<<10), max: s.opts.MaxMessageBytes}
	for {
		line, err := r.next()
		if tooLong, ok := err.(*tooLargeError); ok {
			sess.tooLarge(tooLong.n, s.opts.MaxMessageBytes, peekID(tooLong.head))
			err = nil
		} else if len(line) > 0 && ctx.Err() == nil {
			sess.handle(ctx, line)
		}
		if s.testHookLine != nil {
			s.testHookLine(sess)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("stdio: read: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// tooLarge answers a message that exceeded the size limit, with its id
// when that could be read from the message's first bytes.
func (s *session) tooLarge(n, limit int64, id []byte) {
	s.srv.audit.record(s.id, "in", []byte(fmt.Sprintf("<message of %d bytes discarded>", n)))
	s.reply(id, nil, errorf(codeInvalidRequest, "invalid request: message too large: %d bytes exceeds the limit of %d", n, limit), nil, 0)
}

// tooLargeError reports a line of n bytes over the limit; head is a copy
// of its first bytes (at most peekBytes), to look for its id.
type tooLargeError struct {
	n    int64
	head []byte
}

func (e *tooLargeError) Error() string { return fmt.Sprintf("message of %d bytes too large", e.n) }

// lineReader splits input into lines of at most max bytes.
type lineReader struct {
	br  *bufio.Reader
	max int64
	buf []byte
}

// next returns the next line, without its end of line, as a fresh copy
// (the session keeps it). Blank lines are skipped. A line over the limit is
// read to its end and discarded (memory stays bounded) and reported as a
// *tooLargeError. The last line may lack its newline.
func (r *lineReader) next() ([]byte, error) {
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return r.long(line)
		}
		line = trimEOL(line)
		if int64(len(line)) > r.max {
			return nil, &tooLargeError{n: int64(len(line)), head: headOf(line)}
		}
		if skipWS(line, 0) < len(line) {
			return append([]byte(nil), line...), err
		}
		if err != nil {
			return nil, err
		}
	}
}

// long assembles a line longer than the reader's buffer.
func (r *lineReader) long(first []byte) ([]byte, error) {
	buf := append(r.buf[:0], first...)
	var err error
	for {
		var part []byte
		part, err = r.br.ReadSlice('\n')
		if int64(len(buf)+len(part)) > r.max+2 { // +2: room for "\r\n"
			n := int64(len(buf) + len(part))
			head := headOf(append(buf, part...))
			for err == bufio.ErrBufferFull {
				part, err = r.br.ReadSlice('\n')
				n += int64(len(part))
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, &tooLargeError{n: n - int64(len(part)-len(trimEOL(part))), head: head}
		}
		if cap(buf)-len(buf) < len(part) {
			// Double: append grows large slices by 1.25×, which copies a
			// multi-megabyte line about five times over.
			buf = slices.Grow(buf, max(len(part), len(buf)))
		}
		buf = append(buf, part...)
		if err != bufio.ErrBufferFull {
			break
		}
	}
	keep := cap(buf) <= 1<<20
	r.buf = nil
	if keep {
		r.buf = buf[:0]
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	line := trimEOL(buf)
	if int64(len(line)) > r.max {
		return nil, &tooLargeError{n: int64(len(line)), head: headOf(line)}
	}
	if !keep {
		return line, err // the reader lets go of buf: no copy
	}
	return append([]byte(nil), line...), err
}

// headOf copies the first peekBytes of line.
func headOf(line []byte) []byte {
	return append([]byte(nil), line[:min(len(line), peekBytes)]...)
}

// stdioWriter writes each message and its newline in one locked Write, so
// messages never interleave. After the first failed write (the client went
// away) it cancels the session and drops everything.
type stdioWriter struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	err    error
	closed bool
	failed func()
}

func (w *stdioWriter) send(msg []byte, _ json.RawMessage) error {
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

func (w *stdioWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

func (w *stdioWriter) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
