package streamable

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/hosttest"
	"github.com/mcphost/mcphost/host/stdio"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// The shared fixture (package hosttest), under the names these tests had
// in package host.

type fixture = hosttest.Fixture

type native = hosttest.Native

const guard = hosttest.Guard

var quietLog = hosttest.QuietLog

func newFixture() *fixture { return hosttest.NewFixture() }

func echoExports() map[string]native { return hosttest.EchoExports() }

func loadRegistry(t testing.TB, fx *fixture, set string) *plugins.Registry {
	t.Helper()
	return hosttest.LoadRegistry(t, fx, set)
}

func buildGeneration(t *testing.T, specs ...config.Spec) *plugins.Generation {
	t.Helper()
	return hosttest.BuildGeneration(t, specs...)
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	return hosttest.Recv(t, ch, what)
}

func newServer(t testing.TB, fx *fixture, opts host.Options) *host.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLog
	}
	srv := host.New(loadRegistry(t, fx, "test"), opts)
	t.Cleanup(srv.Close)
	return srv
}

// stdioClient drives stdio.Serve through pipes, to compare the transports.
type stdioClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
}

func startClient(t *testing.T, srv *host.Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioClient{t: t, in: inW, lines: make(chan []byte, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdio.Serve(ctx, srv, inR, outW)
		outW.Close()
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
		<-done
	})
	return c
}

func (c *stdioClient) send(format string, args ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// stdioMessage is a message as received, raw.
type stdioMessage struct{ raw []byte }

func (c *stdioClient) next() stdioMessage {
	c.t.Helper()
	line := recv(c.t, c.lines, "a message from the server")
	if line == nil {
		c.t.Fatal("server closed its output")
	}
	return stdioMessage{raw: line}
}

func (c *stdioClient) initialize(version, caps string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"test","version":"1"}}}`, version, caps)
	if w := c.next(); !strings.Contains(string(w.raw), `"id":"init","result"`) {
		c.t.Fatalf("initialize: got %s", w.raw)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}
