package host

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// serveLines is the tests' transport: newline-delimited JSON over the
// [Conn] seam, read and written as package stdio does (which these tests
// cannot import: it imports host). It returns at EOF, once the requests
// in flight are done, or when ctx is done. step, when not nil, runs on the
// reading goroutine after each line has been handed over, so that a test
// can wait for the line's work.
func serveLines(ctx context.Context, srv *Server, in io.Reader, out io.Writer, step func(*Conn)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &lineWriter{w: out, failed: cancel}
	conn := srv.Connect(w, ConnInfo{ID: "stdio-" + rand.Text()[:8]})
	readErr := make(chan error, 1)
	go func() {
		r := jsonrpc.NewLineReader(in, srv.MaxMessageBytes())
		for {
			line, err := r.Next()
			if tl, ok := err.(*jsonrpc.TooLargeError); ok {
				conn.TooLarge(tl.N, srv.MaxMessageBytes(), jsonrpc.PeekID(tl.Head))
				err = nil
			} else if len(line) > 0 && ctx.Err() == nil {
				conn.Handle(ctx, line)
			}
			if step != nil {
				step(conn)
			}
			if err == io.EOF || ctx.Err() != nil {
				readErr <- nil
				return
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	var err error
	select {
	case err = <-readErr:
		conn.ClientGone()
		conn.Drain(guard + srv.StartupLeft())
	case <-ctx.Done():
	}
	cancel()
	conn.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if err == nil {
		err = w.err
	}
	return err
}

// lineWriter writes each message and its newline in one locked Write;
// after a failed write it cancels the connection and drops the rest.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	closed bool
	failed func()
}

func (w *lineWriter) Send(msg []byte, _ json.RawMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil {
		return errors.New("closed")
	}
	if _, err := w.w.Write(append(append([]byte(nil), msg...), '\n')); err != nil {
		w.err = err
		w.failed()
		return err
	}
	return nil
}

// testClient drives serveLines through pipes, as an MCP client would.
type testClient struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte
	done   chan error
	cancel context.CancelFunc
}

// guard bounds every wait, so a bug fails the test instead of hanging it.
// It is never used to let time pass: tests wait on messages and channels.
const guard = 20 * time.Second

func startClient(t *testing.T, srv *Server) *testClient {
	t.Helper()
	return startClientCtx(t, srv, context.Background())
}

// startClientCtx is startClient with every message handed over under
// (a child of) ctx, as a transport that attaches a Caller does.
func startClientCtx(t *testing.T, srv *Server, ctx context.Context) *testClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	c := &testClient{t: t, in: inW, lines: make(chan []byte, 1024), done: make(chan error, 1), cancel: cancel}
	go func() {
		err := serveLines(ctx, srv, inR, outW, nil)
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
	})
	return c
}

func (c *testClient) send(format string, args ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// wire is a message as the tests inspect it.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw []byte
}

func (c *testClient) next() wire {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("server closed its output")
		}
		var w wire
		if err := json.Unmarshal(line, &w); err != nil {
			c.t.Fatalf("server sent invalid JSON %q: %v", line, err)
		}
		w.raw = line
		return w
	case <-time.After(guard):
		c.t.Fatal("no message from the server")
	}
	return wire{}
}

// initialize runs the handshake with the given version and client
// capabilities.
func (c *testClient) initialize(version, caps string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"test","version":"1"}}}`, version, caps)
	if w := c.next(); string(w.ID) != `"init"` || w.Error != nil {
		c.t.Fatalf("initialize: got %s", w.raw)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// closeInput closes stdin and returns serveLines' result.
func (c *testClient) closeInput() error {
	c.t.Helper()
	c.in.Close()
	select {
	case err := <-c.done:
		return err
	case <-time.After(guard):
		c.t.Fatal("serveLines did not return after EOF")
	}
	return nil
}

// onlySession returns the server's single session.
func onlySession(t *testing.T, srv *Server) *session {
	t.Helper()
	var ss []*session
	srv.eachSession(func(s *session) { ss = append(ss, s) })
	if len(ss) != 1 {
		t.Fatalf("got %d sessions; want 1", len(ss))
	}
	return ss[0]
}

func newServer(t testing.TB, fx *fixture, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLog
	}
	srv := New(loadRegistry(t, fx, "test"), opts)
	t.Cleanup(srv.Close)
	return srv
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
