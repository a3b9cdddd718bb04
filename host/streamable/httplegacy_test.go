package streamable

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestLegacySSE runs a 2024-11-05 HTTP+SSE session: the endpoint event,
// POSTs answered with 202, and every answer on the stream.
func TestLegacySSE(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	ht := startHTTP(t, srv, Options{})
	ended := make(chan struct{}, 1)
	ht.h.testHookLegacyEnd = func() { ended <- struct{}{} }
	c := ht.client()
	s := c.sse(c.do(http.MethodGet, ht.ts.URL+"/sse", ""))
	ep := s.next()
	if ep.event != "endpoint" || !strings.HasPrefix(ep.data, "/messages?sessionId=") {
		t.Fatalf("first event: got %+v; want the endpoint", ep)
	}
	post := func(body string) {
		t.Helper()
		resp := c.do(http.MethodPost, ht.ts.URL+ep.data, body)
		if got := readAll(t, resp); resp.StatusCode != http.StatusAccepted || got != "Accepted" {
			t.Fatalf("POST %s: got %d %q; want 202 Accepted", body, resp.StatusCode, got)
		}
	}
	message := func() string {
		t.Helper()
		ev := s.next()
		if ev.event != "message" {
			t.Fatalf("got event %+v; want a message", ev)
		}
		return ev.data
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"roots":{}},"clientInfo":{"name":"old","version":"1"}}}`)
	if got := message(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize: got %s", got)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"old"}}}`)
	if got, want := message(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"old"}]}}`; got != want {
		t.Errorf("tools/call: got %s; want %s", got, want)
	}
	// A server→client request goes on the stream too; its answer is a POST.
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_ask","arguments":{"method":"roots/list"}}}`)
	if got := message(); got != `{"jsonrpc":"2.0","id":1,"method":"roots/list"}` {
		t.Fatalf("got %s; want the roots request", got)
	}
	post(`{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`)
	if got := message(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `roots`) {
		t.Errorf("ask result: got %s", got)
	}
	post(`{"jsonrpc":"2.0","id":3,"method":"nope"}`)
	if got := message(); !strings.Contains(got, `-32601`) {
		t.Errorf("unknown method: got %s; want -32601", got)
	}

	for _, tc := range []struct {
		url, ct string
		status  int
	}{
		{"/messages?sessionId=nope", "application/json", 404},
		{"/messages", "application/json", 400},
		{ep.data, "text/plain", 415},
	} {
		resp := c.do(http.MethodPost, ht.ts.URL+tc.url, `{}`, "Content-Type", tc.ct)
		if body := readAll(t, resp); resp.StatusCode != tc.status {
			t.Errorf("POST %s (%s): got %d %s; want %d", tc.url, tc.ct, resp.StatusCode, body, tc.status)
		}
	}
	resp := c.do(http.MethodPost, ht.ts.URL+"/sse", `{}`)
	if readAll(t, resp); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
		t.Errorf("POST /sse: got %d Allow %q; want 405 Allow GET", resp.StatusCode, resp.Header.Get("Allow"))
	}

	// The session ends with its stream.
	before := countSessions(srv)
	s.close()
	recv(t, ended, "the end of the legacy session")
	if n := countSessions(srv); n != before-1 {
		t.Errorf("sessions after the stream closed: got %d; want %d", n, before-1)
	}
	resp = c.do(http.MethodPost, ht.ts.URL+ep.data, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if readAll(t, resp); resp.StatusCode != 404 {
		t.Errorf("POST after the stream closed: got %d; want 404", resp.StatusCode)
	}
}
