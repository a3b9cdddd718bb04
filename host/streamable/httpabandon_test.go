package streamable

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// postAbandoned posts body (with the header pairs hdr) on a connection of
// its own and returns the function that hangs up, as a client that gives
// up does: the connection closes before the answer.
func (c *httpClient) postAbandoned(body string, hdr ...string) (hangUp func()) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ht.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", c.version)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	done := make(chan struct{})
	go func() { // ends when cancel closes the connection
		defer close(done)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// TestHTTPDisconnectCancels: a client that closes the connection of a
// POST before its answer has its call cancelled: at once when nothing was
// streamed yet (the answer would have been JSON), or when the stream the
// client could resume stays without a connection for ResumeWindow.
func TestHTTPDisconnectCancels(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		fx := newFixture()
		srv := newServer(t, fx, host.Options{})
		c := startHTTP(t, srv, Options{}).client()
		c.initialize("2025-06-18", `{}`)
		hangUp := c.postAbandoned(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow"}}`)
		recv(t, fx.Started, "the slow call")
		hangUp()
		if err := recv(t, fx.Cancelled, "the plugin's cancellation"); !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned call's ctx: %v; want context.Canceled", err)
		}
		// The id is free again once the cancelled call has returned (a
		// moment after the plugin saw the cancellation, with no event a
		// client can see: until then the id is refused as in use, so that
		// the old call's late answer cannot land on a new request's
		// stream), and the session goes on.
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		for deadline := time.Now().Add(10 * time.Second); ; {
			resp := c.post(ping)
			got := readAll(t, resp)
			if resp.StatusCode == http.StatusBadRequest && strings.Contains(got, "already in use") && time.Now().Before(deadline) {
				continue
			}
			if resp.StatusCode != http.StatusOK || got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
				t.Fatalf("reusing the id: got %d %s", resp.StatusCode, got)
			}
			break
		}
	})
	// A stateless POST's request runs on the POST's own goroutine, which
	// cannot watch the connection meanwhile: its going away still
	// cancels the call.
	t.Run("stateless", func(t *testing.T) {
		fx := newFixture()
		srv := newServer(t, fx, host.Options{})
		c := startHTTP(t, srv, Options{}).client()
		c.version = "2026-07-28"
		hangUp := c.postAbandoned(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow",`+meta2026(`{}`)+`}}`,
			"Mcp-Method", "tools/call", "Mcp-Name", "test_slow")
		recv(t, fx.Started, "the slow call")
		hangUp()
		if err := recv(t, fx.Cancelled, "the plugin's cancellation"); !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned call's ctx: %v; want context.Canceled", err)
		}
	})
	t.Run("sse not resumed", func(t *testing.T) {
		fx := newFixture()
		srv := newServer(t, fx, host.Options{})
		c := startHTTP(t, srv, Options{PollAfter: time.Nanosecond, ResumeWindow: 50 * time.Millisecond}).client()
		c.initialize("2025-11-25", `{}`)
		s := c.stream(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow"}}`)
		if prime := s.next(); prime.id == "" {
			t.Fatalf("got %+v; want a priming event", prime)
		}
		s.end() // the server closes the stream; the client never comes back
		recv(t, fx.Started, "the slow call")
		if err := recv(t, fx.Cancelled, "the plugin's cancellation"); !errors.Is(err, context.Canceled) {
			t.Fatalf("the orphaned call's ctx: %v; want context.Canceled", err)
		}
	})
}
