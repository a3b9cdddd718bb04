package systest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds cmd/mcphost once per test binary.
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := TempDir("mcphost-e2e-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "mcphost")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &BuildErr{Err: err, Out: out}
		}
	})
	if binErr != nil {
		t.Fatalf("building mcphost: %v", binErr)
	}
	return binPath
}

type BuildErr struct {
	Err error
	Out []byte
}

func (e *BuildErr) Error() string { return e.Err.Error() + "\n" + string(e.Out) }

// Server is one running `mcphost serve` with the SDK client attached.
type Server struct {
	Cmd    *exec.Cmd
	Stdin  *lineWriter
	Stderr *bytes.Buffer
	// Diverted receives the server's lines that answer no request of the
	// SDK client (id null: parse errors of injected garbage).
	Diverted chan []byte
	Session  *mcp.ClientSession
}

// StartServer runs mcphost serve with args and connects client to it
// with the 2025-11-25 handshake.
func StartServer(t testing.TB, client *mcp.Client, args ...string) *Server {
	t.Helper()
	return StartServerEra(t, client, "2025-11-25", args...)
}

// StartServerEra is startServer with the client's protocol version:
// 2026-07-28 makes it probe with server/discover and stay stateless.
func StartServerEra(t testing.TB, client *mcp.Client, version string, args ...string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, Binary(t), append([]string{"serve"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Cmd: cmd, Stdin: &lineWriter{W: stdin}, Stderr: new(bytes.Buffer), Diverted: make(chan []byte, 16)}
	cmd.Stderr = &LockedWriter{W: s.Stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	filtered, pw := io.Pipe()
	go s.divert(stdout, pw)
	transport := &mcp.IOTransport{Reader: filtered, Writer: s.Stdin}
	s.Session, err = client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, s.Stderr)
	}
	t.Cleanup(func() {
		s.Session.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("mcphost exited with %v\nstderr:\n%s", err, s.Stderr)
		}
	})
	return s
}

// divert copies the server's stdout to the client, except lines whose id
// is null, which go to s.diverted.
func (s *Server) divert(r io.Reader, w *io.PipeWriter) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &probe) == nil && string(probe.ID) == "null" {
			s.Diverted <- bytes.Clone(line)
			continue
		}
		if _, err := w.Write(append(bytes.Clone(line), '\n')); err != nil {
			break
		}
	}
	w.CloseWithError(sc.Err())
}

// lineWriter forwards whole lines atomically, so a raw line injected by the
// test never lands inside one of the SDK's messages.
type lineWriter struct {
	Mu  sync.Mutex
	W   io.WriteCloser
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		if _, err := l.W.Write(l.buf[:i+1]); err != nil {
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	return len(p), nil
}

// Inject writes one raw line between the client's messages.
func (l *lineWriter) Inject(line string) error {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	_, err := io.WriteString(l.W, line+"\n")
	return err
}

func (l *lineWriter) Close() error { return l.W.Close() }

type LockedWriter struct {
	Mu    sync.Mutex
	W     io.Writer
	wrote chan struct{} // closed at the next Write, for a waiter; nil when none waits
}

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if l.wrote != nil {
		close(l.wrote)
		l.wrote = nil
	}
	return l.W.Write(p)
}

func TextOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
