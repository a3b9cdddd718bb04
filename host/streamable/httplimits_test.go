package streamable

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// slowPost opens a raw connection to ht and sends a POST's headers
// announcing a body of n bytes, with Expect: 100-continue; it returns once
// the server has asked for the body, that is once the handler admitted the
// request and started reading it.
func slowPost(t *testing.T, ht *httpTest, sid string, n int) (net.Conn, *bufio.Reader) {
	t.Helper()
	hdr := ""
	if sid != "" {
		hdr = "Mcp-Session-Id: " + sid + "\r\n"
	}
	conn, br, line := openPost(t, ht, hdr, n)
	if !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("got %q; want 100 Continue", line)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line
		t.Fatal(err)
	}
	return conn, br
}

// openPost sends the headers of a POST (hdr: extra header lines, each
// ending in CRLF) announcing a body of n bytes, with Expect:
// 100-continue, and returns the first line of the answer: 100 Continue
// once the handler admitted the request (the connection then holds it in
// flight until the test ends), or a refusal.
func openPost(t *testing.T, ht *httpTest, hdr string, n int) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	conn, err := net.Dial("tcp", ht.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a failing test ends
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nExpect: 100-continue\r\nContent-Length: %d\r\n", ht.h.opts.Path, n)
	if _, err := io.WriteString(conn, req+hdr+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return conn, br, line
}

// TestHTTPSlowBody drips a body a byte every few milliseconds: the server
// answers 408 once BodyTimeout has passed since the headers, however
// steady the drip, and closes the connection.
func TestHTTPSlowBody(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	const timeout = 300 * time.Millisecond
	ht := startHTTP(t, srv, Options{BodyTimeout: timeout})
	start := time.Now()
	conn, br := slowPost(t, ht, "", 1000)
	stop := make(chan struct{})
	dripped := make(chan struct{})
	go func() { // ends when stopped or when the server closes the connection
		defer close(dripped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte{' '}); err != nil {
					return
				}
			}
		}
	}()
	resp, err := http.ReadResponse(br, nil)
	close(stop)
	<-dripped
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body := readAll(t, resp)
	elapsed := time.Since(start)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, `"code":-32000,"message":"Request Timeout`) {
		t.Errorf("got %d %s; want 408 Request Timeout", resp.StatusCode, body)
	}
	if elapsed < timeout || elapsed > timeout+10*time.Second {
		t.Errorf("answered after %v; want just after %v", elapsed, timeout)
	}
	if n, err := br.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d more bytes; want the connection closed", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("connection still open after the 408: %v", err)
	}

	// A normal client on the same server is unaffected, also once its
	// connection has outlived the body timeout between requests.
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	for range 2 {
		resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
			t.Errorf("ping: got %d %s; want 200", resp.StatusCode, body)
		}
	}
}

// TestHTTPInFlightLimits holds requests open with slow bodies and checks
// that one more from the same client, or on the same session, is refused
// with 429 while others go on.
func TestHTTPInFlightLimits(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	t.Run("per client", func(t *testing.T) {
		srv := newServer(t, newFixture(), host.Options{})
		ht := startHTTP(t, srv, Options{MaxInFlightPerClient: 3})
		c := ht.client()
		c.initialize("2025-11-25", `{}`)
		slowPost(t, ht, "", 100)
		slowPost(t, ht, "", 100)
		slowPost(t, ht, "", 100)
		resp := c.post(ping)
		if body := readAll(t, resp); resp.StatusCode != http.StatusTooManyRequests ||
			!strings.Contains(body, `"code":-32000,"message":"Too Many Requests: 3 requests from this client are in flight"`) {
			t.Errorf("got %d %s; want 429 naming the client limit", resp.StatusCode, body)
		}
	})
	t.Run("per session", func(t *testing.T) {
		srv := newServer(t, newFixture(), host.Options{})
		ht := startHTTP(t, srv, Options{MaxInFlightPerSession: 2})
		busy, other := ht.client(), ht.client()
		busy.initialize("2025-11-25", `{}`)
		other.initialize("2025-11-25", `{}`)
		slowPost(t, ht, busy.session, 100)
		slowPost(t, ht, busy.session, 100)
		resp := busy.post(ping)
		if body := readAll(t, resp); resp.StatusCode != http.StatusTooManyRequests ||
			!strings.Contains(body, `"code":-32000,"message":"Too Many Requests: 2 requests on this session are in flight"`) {
			t.Errorf("busy session: got %d %s; want 429 naming the session limit", resp.StatusCode, body)
		}
		resp = other.post(ping)
		if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"result":{}`) {
			t.Errorf("other session: got %d %s; want 200", resp.StatusCode, body)
		}
	})
}

// TestHTTPMaxSessions: once MaxSessions are open, initialize gets 503 on
// both transports, and the open sessions keep working.
func TestHTTPMaxSessions(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{MaxSessions: 1})
	first := ht.client()
	first.initialize("2025-11-25", `{}`)
	resp := ht.client().post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable ||
		!strings.Contains(body, `"code":-32000,"message":"Service Unavailable: 1 sessions are open`) || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("second initialize: got %d %s; want 503 and no session", resp.StatusCode, body)
	}
	resp = ht.client().do(http.MethodGet, ht.ts.URL+legacySSEPath, "", "Accept", "text/event-stream")
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("legacy stream: got %d %s; want 503", resp.StatusCode, body)
	}
	resp = first.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if body := readAll(t, resp); resp.StatusCode != 200 {
		t.Errorf("ping on the open session: got %d %s; want 200", resp.StatusCode, body)
	}
}
