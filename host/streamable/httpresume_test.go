package streamable

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// TestHTTPReplayPOSTStream: a client that lost a call's stream resumes it
// with GET and Last-Event-ID and gets exactly what came after that event,
// from the session's buffer, then the stream ends (it was complete).
func TestHTTPReplayPOSTStream(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	s := c.stream(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"test_progress","_meta":{"progressToken":1}}}`)
	prime := s.next()
	first := s.next()
	all := append([]sseEvent{prime, first}, s.end()...)
	if len(all) != 4 {
		t.Fatalf("got %d events; want priming, 2 progress and the result", len(all))
	}
	seen := map[string]bool{}
	for _, ev := range all {
		if ev.id == "" || seen[ev.id] {
			t.Errorf("event %+v: want a unique id", ev)
		}
		seen[ev.id] = true
	}

	for _, tc := range []struct {
		from string
		want []sseEvent
	}{
		{first.id, all[2:]},
		{prime.id, all[1:]},
		{all[3].id, nil},
	} {
		r := c.get("Last-Event-ID", tc.from)
		got := r.end()
		if len(got) == 0 || got[0].data != "" || got[0].retry == "" {
			t.Errorf("resuming after %s: got %+v; want a retry hint first", tc.from, got)
			continue
		}
		if got = got[1:]; !equalEvents(got, tc.want) {
			t.Errorf("resuming after %s:\ngot  %+v\nwant %+v", tc.from, got, tc.want)
		}
	}
	// The standalone stream is still free: resuming did not take it.
	g := c.get()
	if ev := g.next(); ev.data != "" {
		t.Errorf("GET: got %+v; want a priming event", ev)
	}
}

func equalEvents(a, b []sseEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id || a[i].data != b[i].data {
			return false
		}
	}
	return true
}

// TestHTTPReplayStandaloneStream: server-initiated messages sent while the
// client was away wait in the buffer for a GET with Last-Event-ID.
func TestHTTPReplayStandaloneStream(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	c.call(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`)
	g := c.get()
	g.next() // priming
	srv.Notify("info", "t", "one")
	one := g.next()
	g.close()
	srv.Notify("info", "t", "two")
	srv.Notify("info", "t", "three")
	r := c.get("Last-Event-ID", one.id)
	r.next() // retry hint
	for _, want := range []string{"two", "three"} {
		if got := r.message(); !strings.Contains(got, `"data":"`+want+`"`) {
			t.Errorf("replayed: got %s; want %q", got, want)
		}
	}
	srv.Notify("info", "t", "four")
	if got := r.message(); !strings.Contains(got, `"four"`) {
		t.Errorf("live after replay: got %s; want \"four\"", got)
	}
}

// TestHTTPReplayBufferBound: the buffer keeps the newest events only.
func TestHTTPReplayBufferBound(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{ReplayEvents: 3})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	c.call(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`)
	g := c.get()
	prime := g.next()
	g.close()
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		srv.Notify("info", "t", d)
	}
	r := c.get("Last-Event-ID", prime.id)
	r.next()
	for _, want := range []string{"c", "d", "e"} {
		if got := r.message(); !strings.Contains(got, `"data":"`+want+`"`) {
			t.Errorf("got %s; want %q (the oldest events evicted)", got, want)
		}
	}
}

// TestHTTPPollAfter: with PollAfter the server closes a long call's stream
// after the priming event (SEP-1699) and delivers the response when the
// client comes back with Last-Event-ID; this is what conformance's
// test_reconnection checks.
func TestHTTPPollAfter(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	ht := startHTTP(t, srv, Options{PollAfter: time.Nanosecond, Retry: 250 * time.Millisecond})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	// The conformance client sends another supported version than the
	// negotiated one on this request; the session's version decides.
	s := c.stream(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow"}}`)
	prime := s.next()
	if prime.id == "" || prime.data != "" || prime.retry != "250" {
		t.Fatalf("got %+v; want a priming event with retry 250", prime)
	}
	if rest := s.end(); len(rest) != 0 {
		t.Fatalf("got %+v; want the stream closed after the priming event", rest)
	}
	recv(t, fx.Started, "the slow call")
	fx.Release <- struct{}{}
	r := c.get("Last-Event-ID", prime.id)
	got := r.end()
	if len(got) != 2 || got[1].data != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}` {
		t.Errorf("after reconnecting: got %+v; want the retry hint and the result", got)
	}
}

// TestHTTPPollAfterOldClient: clients before 2025-11-25 get no priming
// event, so their streams are never closed early.
func TestHTTPPollAfterOldClient(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	c := startHTTP(t, srv, Options{PollAfter: time.Nanosecond}).client()
	c.initialize("2025-06-18", `{}`)
	done := c.background(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow call")
	fx.Release <- struct{}{}
	if got, want := recv(t, done, "the response"), `200 application/json {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`; got != want {
		t.Errorf("got %s; want %s", got, want)
	}
}

// TestHTTPExpiry: idle sessions end; busy ones and open streams keep a
// session alive.
func TestHTTPExpiry(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{SessionIdle: time.Hour})
	idle, streaming := ht.client(), ht.client()
	idle.initialize("2025-11-25", `{}`)
	streaming.initialize("2025-11-25", `{}`)
	g := streaming.get()
	g.next()
	ht.h.expire(time.Now()) // nothing is an hour old yet
	idle.call(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	ht.h.expire(time.Now().Add(2 * time.Hour))
	resp := idle.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if body := readAll(t, resp); resp.StatusCode != 404 {
		t.Errorf("idle session after expiry: got %d %s; want 404", resp.StatusCode, body)
	}
	if got := streaming.call(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("session with an open stream: got %s; want it alive", got)
	}
}

// TestHTTPShutdown: shutting down refuses new work, lets the call in
// flight finish and deliver its response, then closes the streams.
func TestHTTPShutdown(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	g := c.get()
	g.next()
	done := c.background(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow call")

	closing := make(chan struct{})
	ht.h.testHookClosing = func() { close(closing) }
	shut := make(chan error, 1)
	go func() { shut <- ht.h.Shutdown(context.Background()) }()
	recv(t, closing, "shutdown")
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
	} {
		resp := c.post(req)
		if body := readAll(t, resp); resp.StatusCode != 503 {
			t.Errorf("during shutdown %s: got %d %s; want 503", req, resp.StatusCode, body)
		}
	}
	fx.Release <- struct{}{}
	if got, want := recv(t, done, "the slow call's response"), `200 application/json {"jsonrpc":"2.0","id":"slow","result":{"content":[{"type":"text","text":"done"}]}}`; got != want {
		t.Errorf("in-flight call: got %s; want %s", got, want)
	}
	if err := recv(t, shut, "Shutdown"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	g.end()
}

// TestServeStreamableHTTP runs the real listener loop: cancelling its
// context ends it, and its streams, cleanly.
func TestServeStreamableHTTP(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, ln, Options{Path: "/x"}) }()
	ht := &httpTest{t: t, srv: srv, url: "http://" + ln.Addr().String() + "/x"}
	c := &httpClient{t: t, ht: ht, hc: &http.Client{}, header: http.Header{}}
	c.initialize("2025-11-25", `{}`)
	g := c.get()
	g.next()
	cancel()
	if err := recv(t, served, "ServeStreamableHTTP"); err != nil {
		t.Errorf("ServeStreamableHTTP: got %v; want nil", err)
	}
	g.end()
	if _, err := http.Get("http://" + ln.Addr().String() + "/x"); err == nil {
		t.Error("the listener still accepts connections")
	}
}

// TestHTTPShutdownWaitsForClientAnswer: a call waiting on the client when
// shutdown begins still gets the client's answer and finishes.
func TestHTTPShutdownWaitsForClientAnswer(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.initialize("2025-11-25", `{"roots":{}}`)
	s := c.stream(`{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"test_ask","arguments":{"method":"roots/list"}}}`)
	if m := s.message(); msgMethod(m) != "roots/list" {
		t.Fatalf("got %s; want the roots request", m)
	}
	closing := make(chan struct{})
	ht.h.testHookClosing = func() { close(closing) }
	shut := make(chan error, 1)
	go func() { shut <- ht.h.Shutdown(context.Background()) }()
	recv(t, closing, "shutdown")
	c.notify(`{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///x"}]}}`)
	if got := s.message(); !strings.Contains(got, `"id":"r"`) || !strings.Contains(got, `file:///x`) {
		t.Errorf("result: got %s; want the call's result with the roots", got)
	}
	if err := recv(t, shut, "Shutdown"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
