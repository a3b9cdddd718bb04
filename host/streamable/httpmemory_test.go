package streamable

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/mcphost/mcphost/host"
)

// TestHTTPDeletedSessionsFreed: sessions made in the shape of the HTTP
// benchmark (initialize, notifications/initialized, one tools/call,
// DELETE) leave nothing behind once DELETEd: the handler's session, with
// its streams, replay buffer and connection, is collected. A map or
// buffer still holding one would keep a server's memory growing with
// every session it ever served.
func TestHTTPDeletedSessionsFreed(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	var gone []weak.Pointer[httpSession]
	for i := range 20 {
		c := ht.client()
		c.initialize("2025-11-25", `{}`)
		ht.h.mu.Lock()
		hs := ht.h.sessions[c.session]
		ht.h.mu.Unlock()
		if hs == nil {
			t.Fatalf("session %d: not in the handler's map", i)
		}
		gone = append(gone, weak.Make(hs))
		hs = nil
		if got := c.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"}}}`, i+1)); !strings.Contains(got, `"text":"hi"`) {
			t.Fatalf("session %d: tools/call answered %s", i, got)
		}
		if resp := c.do(http.MethodDelete, ht.url, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("session %d: DELETE: %d %s", i, resp.StatusCode, readAll(t, resp))
		}
	}
	if n := countSessions(srv); n != 0 {
		t.Fatalf("server sessions after DELETE: got %d; want 0", n)
	}
	// A session's last goroutines (its connection's reader, a handler
	// returning) may still be ending: each full collection lets them run.
	live := len(gone)
	for range 50 {
		runtime.GC()
		live = 0
		for _, p := range gone {
			if p.Value() != nil {
				live++
			}
		}
		if live == 0 {
			break
		}
	}
	if live != 0 {
		t.Errorf("%d of %d DELETEd sessions still reachable after 50 collections", live, len(gone))
	}
}

// TestHTTPStatelessLeavesNothing: session-less POSTs (the benchmark's
// stateless form) leave no session behind, on either side.
func TestHTTPStatelessLeavesNothing(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.version = "2026-07-28"
	for i := range 20 {
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"},%s}}`, i+1, meta2026(`{}`))
		resp := c.do(http.MethodPost, ht.url, call, "Mcp-Method", "tools/call", "Mcp-Name", "test_echo")
		if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"text":"hi"`) {
			t.Fatalf("call %d: got %d %s", i, resp.StatusCode, body)
		}
	}
	ht.h.mu.Lock()
	n := len(ht.h.sessions)
	ht.h.mu.Unlock()
	if n != 0 {
		t.Errorf("handler sessions after stateless calls: got %d; want 0", n)
	}
	if n := countSessions(srv); n != 0 {
		t.Errorf("server sessions after stateless calls: got %d; want 0", n)
	}
}
