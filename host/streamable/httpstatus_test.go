package streamable

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestHTTPStatusCodes covers the transport's refusals, each with the
// JSON-RPC error body the reference SDK sends.
func TestHTTPStatusCodes(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{MaxBodyBytes: 1024})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	noSession := ht.client()
	unknown := ht.client()
	unknown.session = "NOSUCHSESSION"

	for _, tc := range []struct {
		name       string
		c          *httpClient
		method     string
		body       string
		hdr        []string
		status     int
		wantInBody string
		wantHeader [2]string
	}{
		{"accept without event-stream", c, "POST", ping, []string{"Accept", "application/json"}, 406, `"code":-32000`, [2]string{}},
		{"accept without json", c, "POST", ping, []string{"Accept", "text/event-stream"}, 406, "Not Acceptable", [2]string{}},
		{"no accept", c, "POST", ping, []string{"Accept", ""}, 406, "Not Acceptable", [2]string{}},
		{"accept with q=0", c, "POST", ping, []string{"Accept", "application/json, text/event-stream;q=0"}, 406, "Not Acceptable", [2]string{}},
		{"accept wildcard", c, "POST", ping, []string{"Accept", "*/*"}, 200, `"result":{}`, [2]string{}},
		{"content type text", c, "POST", ping, []string{"Content-Type", "text/plain"}, 415, "Unsupported Media Type", [2]string{}},
		{"content type with charset", c, "POST", ping, []string{"Content-Type", "application/json; charset=utf-8"}, 200, `"result":{}`, [2]string{}},
		{"body too large", c, "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`, nil, 413, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Request Entity Too Large`, [2]string{}},
		{"body too large, id after params", c, "POST", `{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"},"id":1}`, nil, 413, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Request Entity Too Large`, [2]string{}},
		{"not JSON", c, "POST", `{"jsonrpc":`, nil, 400, `"code":-32700`, [2]string{}},
		{"not a message", c, "POST", `{"jsonrpc":"2.0","id":5}`, nil, 400, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600`, [2]string{}},
		{"no session", noSession, "POST", ping, nil, 400, "Mcp-Session-Id header is required", [2]string{}},
		{"no session, notification", noSession, "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 400, "Mcp-Session-Id header is required", [2]string{}},
		{"unknown session", unknown, "POST", ping, nil, 404, `"code":-32001,"message":"Session not found"`, [2]string{}},
		{"unknown session GET", unknown, "GET", "", nil, 404, "Session not found", [2]string{}},
		{"unknown session DELETE", unknown, "DELETE", "", nil, 404, "Session not found", [2]string{}},
		{"no session GET", noSession, "GET", "", nil, 400, "Mcp-Session-Id header is required", [2]string{}},
		{"unsupported version", c, "POST", ping, []string{"MCP-Protocol-Version", "1999-01-01"}, 400, "Unsupported protocol version: 1999-01-01", [2]string{}},
		{"other supported version", c, "POST", ping, []string{"MCP-Protocol-Version", "2025-03-26"}, 200, `"result":{}`, [2]string{}},
		{"no version header", c, "POST", ping, []string{"MCP-Protocol-Version", ""}, 200, `"result":{}`, [2]string{}},
		{"unsupported version GET", c, "GET", "", []string{"MCP-Protocol-Version", "x"}, 400, "Unsupported protocol version", [2]string{}},
		{"GET without event-stream", c, "GET", "", []string{"Accept", "application/json"}, 406, "Not Acceptable", [2]string{}},
		{"PUT", c, "PUT", ping, nil, 405, "Method Not Allowed", [2]string{"Allow", "GET, POST, DELETE"}},
		{"PATCH", c, "PATCH", ping, nil, 405, "Method Not Allowed", [2]string{"Allow", "GET, POST, DELETE"}},
		{"malformed Last-Event-ID", c, "GET", "", []string{"Last-Event-ID", "x"}, 400, "malformed Last-Event-ID", [2]string{}},
		{"Last-Event-ID of no stream", c, "GET", "", []string{"Last-Event-ID", "77-1"}, 400, "names no stream", [2]string{}},
		{"second initialize", c, "POST", `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil, 200, `"code":-32600,"message":"invalid request: already initialized"`, [2]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.c.do(tc.method, ht.url, tc.body, tc.hdr...)
			body := readAll(t, resp)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.wantInBody) {
				t.Errorf("got %d %s; want %d with %s", resp.StatusCode, body, tc.status, tc.wantInBody)
			}
			if k := tc.wantHeader[0]; k != "" && resp.Header.Get(k) != tc.wantHeader[1] {
				t.Errorf("%s: got %q; want %q", k, resp.Header.Get(k), tc.wantHeader[1])
			}
		})
	}
}

// TestHTTPInitializeErrors: a failed initialize creates no session.
func TestHTTPInitializeErrors(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	body := readAll(t, resp)
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: missing protocolVersion"}}`; body != want {
		t.Errorf("got %s; want %s", body, want)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("got session %q; want none after a failed initialize", sid)
	}
	resp = c.post(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]`)
	if body := readAll(t, resp); resp.StatusCode != 400 {
		t.Errorf("batched initialize: got %d %s; want 400", resp.StatusCode, body)
	}
	ht.h.mu.Lock()
	n := len(ht.h.sessions)
	ht.h.mu.Unlock()
	if n != 0 {
		t.Errorf("got %d sessions; want 0", n)
	}
}

// TestHTTPDelete: DELETE ends the session; everything after gets 404.
func TestHTTPDelete(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	get := c.get()
	get.next() // priming
	resp := c.do(http.MethodDelete, ht.url, "")
	if body := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("DELETE: got %d %s; want 200", resp.StatusCode, body)
	}
	if rest := get.end(); len(rest) != 0 {
		t.Errorf("GET stream after DELETE: got %v; want it closed", rest)
	}
	for _, m := range []string{"POST", "GET", "DELETE"} {
		resp := c.do(m, ht.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if body := readAll(t, resp); resp.StatusCode != 404 || !strings.Contains(body, "Session not found") {
			t.Errorf("%s after DELETE: got %d %s; want 404", m, resp.StatusCode, body)
		}
	}
	if n := countSessions(srv); n != 0 {
		t.Errorf("server sessions after DELETE: got %d; want 0", n)
	}
}

// countSessions counts the server's initialized and stateless sessions.
func countSessions(srv *host.Server) int {
	st := srv.Stats()
	return st.Sessions + st.Stateless
}

// TestHTTPSecondGETStream: one standalone stream per session.
func TestHTTPSecondGETStream(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.initialize("2025-11-25", `{}`)
	get := c.get()
	get.next()
	resp := c.do(http.MethodGet, ht.url, "")
	if body := readAll(t, resp); resp.StatusCode != http.StatusConflict {
		t.Errorf("second GET: got %d %s; want 409", resp.StatusCode, body)
	}
}
