package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
)

func TestSlowToolDoesNotDelayPing(t *testing.T) {
	fx := newFixture()
	c := startClient(t, newServer(t, fx, Options{}))
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow tool to start")
	c.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	c.send(`{"jsonrpc":"2.0","id":"echo","method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"}}}`)
	got := map[string]bool{}
	for range 2 {
		got[string(c.next().ID)] = true
	}
	if !got[`"ping"`] || !got[`"echo"`] {
		t.Fatalf("while the slow tool runs: got responses %v; want ping and echo", got)
	}
	close(fx.Release)
	if w := c.next(); string(w.ID) != `"slow"` || !strings.Contains(string(w.Result), "done") {
		t.Fatalf("slow tool: got %s; want its result", w.raw)
	}
}

func TestCancelStopsCallWithoutResponse(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, Options{})
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow tool to start")
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"user"}}`)
	if err := recv(t, fx.Cancelled, "the slow tool's ctx to end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("slow tool's ctx: got %v; want context.Canceled", err)
	}
	onlySession(t, srv).wg.Wait() // the handler has returned
	c.send(`{"jsonrpc":"2.0","id":42,"method":"ping"}`)
	if w := c.next(); string(w.ID) != "42" {
		t.Fatalf("after cancelling 41: got %s; want only the ping's response", w.raw)
	}
}

func TestConcurrentCallsKeepTheirIDs(t *testing.T) {
	const n = 200
	idOf := func(i int) string { // numbers and strings, mixed
		if i%2 == 0 {
			return fmt.Sprintf(`"s%d"`, i)
		}
		return fmt.Sprint(i)
	}
	c := startClient(t, newServer(t, newFixture(), Options{}))
	c.initialize("2025-11-25", `{}`)
	go func() {
		for i := range n {
			fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"%d"}}}`+"\n", idOf(i), i)
		}
	}()
	seen := map[string]bool{}
	for range n {
		w := c.next()
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(w.Result, &res); err != nil || len(res.Content) != 1 {
			t.Fatalf("got %s; want an echo result", w.raw)
		}
		i, err := strconv.Atoi(res.Content[0].Text)
		if err != nil {
			t.Fatalf("got %s; want an echoed number", w.raw)
		}
		if want := idOf(i); string(w.ID) != want || seen[want] {
			t.Fatalf("response to call %d carries id %s (seen before: %v); want %s once", i, w.ID, seen[want], want)
		}
		seen[string(w.ID)] = true
	}
}

func TestHandlerPanicIsInternalError(t *testing.T) {
	boom := func(context.Context, *session, *request) (any, error) { panic("boom") }
	srv := newServer(t, newFixture(), Options{})
	srv.methods["test/panic-inline"] = &method{name: "test/panic-inline", fn: boom, inline: true}
	srv.methods["test/panic-async"] = &method{name: "test/panic-async", fn: boom}
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)
	for i, m := range []string{"test/panic-inline", "test/panic-async"} {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i, m)
		w := c.next()
		if w.Error == nil || w.Error.Code != jsonrpc.CodeInternal || string(w.ID) != fmt.Sprint(i) {
			t.Fatalf("%s: got %s; want -32603 for id %d", m, w.raw, i)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if w := c.next(); string(w.ID) != `"after"` || w.Error != nil {
		t.Fatalf("after the panics: got %s; want the ping's result", w.raw)
	}
}

func TestDuplicateIDInFlight(t *testing.T) {
	fx := newFixture()
	c := startClient(t, newServer(t, fx, Options{}))
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow tool to start")
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if w := c.next(); w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("reused id: got %s; want -32600", w.raw)
	}
	close(fx.Release)
	if w := c.next(); string(w.ID) != "5" || w.Error != nil {
		t.Fatalf("got %s; want the slow tool's result", w.raw)
	}
}

func TestEOFLetsInFlightRequestsFinish(t *testing.T) {
	fx := newFixture()
	c := startClient(t, newServer(t, fx, Options{}))
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow tool to start")
	c.in.Close()
	close(fx.Release)
	if w := c.next(); string(w.ID) != `"last"` || !strings.Contains(string(w.Result), "done") {
		t.Fatalf("after EOF: got %s; want the in-flight result", w.raw)
	}
	if err := recv(t, c.done, "serveLines to return"); err != nil {
		t.Fatalf("serveLines after EOF: got %v; want nil", err)
	}
}

func TestContextCancelStopsServing(t *testing.T) {
	fx := newFixture()
	c := startClient(t, newServer(t, fx, Options{}))
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow tool to start")
	c.cancel()
	if err := recv(t, fx.Cancelled, "the slow tool's ctx to end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("slow tool's ctx: got %v; want context.Canceled", err)
	}
	if err := recv(t, c.done, "serveLines to return"); err != nil {
		t.Fatalf("serveLines after cancel: got %v; want nil", err)
	}
	if line, ok := <-c.lines; ok {
		t.Fatalf("after cancel: got %s; want no more output", line)
	}
}

func TestStartupWait(t *testing.T) {
	t.Run("waits for the initial load", func(t *testing.T) {
		reg := plugins.NewRegistry()
		srv := New(reg, Options{Logger: quietLog, StartupWait: guard})
		defer srv.Close()
		c := startClient(t, srv)
		c.initialize("2025-11-25", `{}`)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if w := c.next(); string(w.ID) != "2" {
			t.Fatalf("got %s; want the ping first (tools/list waits)", w.raw)
		}
		loaded := loadRegistry(t, newFixture(), "echo")
		g, release := loaded.Acquire()
		defer release()
		reg.Swap(context.Background(), g)
		if w := c.next(); string(w.ID) != "1" || !strings.Contains(string(w.Result), `"echo_echo"`) {
			t.Fatalf("got %s; want tools/list with the loaded tool", w.raw)
		}
	})
	t.Run("negative means no wait", func(t *testing.T) {
		srv := New(plugins.NewRegistry(), Options{Logger: quietLog, StartupWait: -1})
		defer srv.Close()
		c := startClient(t, srv)
		c.initialize("2025-11-25", `{}`)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if w := c.next(); w.Method != "notifications/message" {
			t.Fatalf("got %s; want the warning that plugins are still loading", w.raw)
		}
		if w := c.next(); !strings.HasPrefix(string(w.Result), `{"tools":[],"_meta":{"mcphost/loading":`) {
			t.Fatalf("got %s; want an empty list at once, saying plugins are still loading", w.raw)
		}
	})
}

// captureOut is an outbound that records every message.
type captureOut struct {
	mu   sync.Mutex
	msgs []string
	rel  []string
}

func (c *captureOut) Send(msg []byte, related json.RawMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, string(msg))
	c.rel = append(c.rel, string(related))
	return nil
}

func (c *captureOut) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs, c.rel = nil, nil
	return m
}

// newTestSession returns a session on a capturing transport, initialized
// at version with caps (initialized: ready).
func newTestSession(t *testing.T, srv *Server, ver protocol.Version, caps clientCaps) (*session, *captureOut) {
	t.Helper()
	out := &captureOut{}
	s := srv.newSession(out, "test")
	s.state.Store(&clientState{version: ver, caps: caps})
	s.ready.Store(true)
	t.Cleanup(s.close)
	return s, out
}
