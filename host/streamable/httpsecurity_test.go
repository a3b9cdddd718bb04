package streamable

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestHTTPHostAndOrigin: DNS-rebinding protection. Both headers are
// checked on every request, before anything else (403 even for
// initialize), and the loopback names pass with any port.
func TestHTTPHostAndOrigin(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{
		AllowedHosts:   []string{"mcp.example.com", "pinned.example.com:8443"},
		AllowedOrigins: []string{"https://app.example.com", "http://tool.example.com:3000/"},
	})
	port := ht.ts.Listener.Addr().String()[len("127.0.0.1:"):]
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		host, origin string
		status       int
	}{
		{"", "", 200}, // the client's own 127.0.0.1:port
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port, 200},
		{"localhost:" + port, "http://localhost:" + port, 200},
		{"[::1]:" + port, "http://[::1]:" + port, 200},
		{"LOCALHOST", "https://localhost:1234", 200},
		{"localhost:9", "", 200},
		{"mcp.example.com", "", 200},
		{"mcp.example.com:8080", "https://mcp.example.com:8080", 200}, // same origin
		{"pinned.example.com:8443", "", 200},
		{"127.0.0.1:" + port, "https://app.example.com", 200},
		{"127.0.0.1:" + port, "http://tool.example.com:3000", 200},

		{"evil.example.com", "http://evil.example.com", 403}, // the conformance check
		{"evil.example.com:" + port, "", 403},
		{"pinned.example.com:9999", "", 403},
		{"127.0.0.1.evil.example.com", "", 403},
		{"localhost.evil.example.com:" + port, "", 403},
		{"10.0.0.1:" + port, "", 403},
		{"127.0.0.1:" + port, "http://evil.example.com", 403},
		{"127.0.0.1:" + port, "null", 403},
		{"127.0.0.1:" + port, "https://app.example.com:444", 403},
		{"127.0.0.1:" + port, "http://app.example.com", 403},
		{"127.0.0.1:" + port, "file://", 403},
		{"127.0.0.1:" + port, "http://localhost.evil.example.com", 403},
		{"mcp.example.com", "https://mcp.example.com:8080", 403}, // not the same host:port
	} {
		resp := ht.client().post(init, "Host", tc.host, "Origin", tc.origin)
		body := readAll(t, resp)
		if resp.StatusCode != tc.status {
			t.Errorf("Host %q Origin %q: got %d %s; want %d", tc.host, tc.origin, resp.StatusCode, body, tc.status)
		}
		if tc.status == 403 && (!strings.Contains(body, `"code":-32000`) || resp.Header.Get("Mcp-Session-Id") != "") {
			t.Errorf("Host %q Origin %q: got %s, session %q; want a JSON-RPC error and no session", tc.host, tc.origin, body, resp.Header.Get("Mcp-Session-Id"))
		}
		if tc.status == 200 && tc.origin != "" && resp.Header.Get("Access-Control-Allow-Origin") != tc.origin {
			t.Errorf("Origin %q: got Access-Control-Allow-Origin %q; want the origin", tc.origin, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	// The legacy endpoints are guarded too.
	resp := ht.client().do(http.MethodGet, ht.ts.URL+"/sse", "", "Host", "evil.example.com")
	if body := readAll(t, resp); resp.StatusCode != 403 {
		t.Errorf("legacy GET with a bad Host: got %d %s; want 403", resp.StatusCode, body)
	}
}

// TestHTTPPreflight: a browser on an allowed origin may ask first.
func TestHTTPPreflight(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{AuthToken: "secret"})
	resp := ht.client().do(http.MethodOptions, ht.url, "", "Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST")
	readAll(t, resp)
	if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") {
		t.Errorf("preflight: got %d %v; want 204 allowing Mcp-Session-Id", resp.StatusCode, resp.Header)
	}
	// The stateless era's headers, which the official 2.x client sends.
	resp = ht.client().do(http.MethodOptions, ht.url, "", "Origin", "http://127.0.0.1:8080", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type,mcp-method,mcp-name,mcp-param-region,mcp-param-x y")
	readAll(t, resp)
	allowed := resp.Header.Get("Access-Control-Allow-Headers")
	for _, want := range []string{"Mcp-Method", "Mcp-Name", "mcp-param-region"} {
		if !strings.Contains(allowed, want) {
			t.Errorf("preflight asking for %s: Access-Control-Allow-Headers %q", want, allowed)
		}
	}
	if strings.Contains(allowed, "x y") {
		t.Errorf("preflight echoed a header name that is not a token: %q", allowed)
	}
	resp = ht.client().do(http.MethodOptions, ht.url, "", "Origin", "http://evil.example.com", "Access-Control-Request-Method", "POST")
	if readAll(t, resp); resp.StatusCode != 403 {
		t.Errorf("preflight from a bad origin: got %d; want 403", resp.StatusCode)
	}
}

// TestHTTPBearerToken: with a token, every request must carry it.
func TestHTTPBearerToken(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{AuthToken: "s3cret-token"})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		auth      string
		status    int
		challenge string
	}{
		{"", 401, `Bearer realm="mcphost"`},
		{"Bearer wrong", 401, `Bearer realm="mcphost", error="invalid_token"`},
		{"Bearer s3cret-token-and-more", 401, `Bearer realm="mcphost", error="invalid_token"`},
		{"Basic czNjcmV0LXRva2Vu", 401, `Bearer realm="mcphost", error="invalid_token"`},
		{"s3cret-token", 401, `Bearer realm="mcphost", error="invalid_token"`},
		{"Bearer s3cret-token", 200, ""},
		{"bearer s3cret-token", 200, ""},
	} {
		resp := ht.client().post(init, "Authorization", tc.auth)
		body := readAll(t, resp)
		if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("Authorization %q: got %d %q %s; want %d %q", tc.auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, tc.status, tc.challenge)
		}
	}
	// A session id is not a credential on its own.
	c := ht.client()
	c.header.Set("Authorization", "Bearer s3cret-token")
	c.initialize("2025-11-25", `{}`)
	resp := c.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`, "Authorization", "")
	if readAll(t, resp); resp.StatusCode != 401 {
		t.Errorf("session without the token: got %d; want 401", resp.StatusCode)
	}
	for _, path := range []string{"/sse", "/messages?sessionId=x"} {
		resp := ht.client().do(http.MethodGet, ht.ts.URL+path, "")
		if readAll(t, resp); resp.StatusCode != 401 {
			t.Errorf("legacy %s without the token: got %d; want 401", path, resp.StatusCode)
		}
	}
}

func TestHostName(t *testing.T) {
	for in, want := range map[string]string{
		"localhost": "localhost", "localhost:80": "localhost", "[::1]": "::1", "[::1]:9": "::1",
		"127.0.0.1:0": "127.0.0.1", "": "", "[::1": "", "a b": "", "a/b": "", "x@y": "", "::1": "",
		"example.com": "example.com",
	} {
		if got := hostName(in); got != want {
			t.Errorf("hostName(%q): got %q; want %q", in, got, want)
		}
	}
}

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		values []string
		typ    string
		want   bool
	}{
		{[]string{"application/json, text/event-stream"}, "text/event-stream", true},
		{[]string{"application/json", "text/event-stream"}, "text/event-stream", true},
		{[]string{"text/*"}, "text/event-stream", true},
		{[]string{"*/*;q=0.5"}, "application/json", true},
		{[]string{"application/json;q=0"}, "application/json", false},
		{[]string{"application/json;q=0.000"}, "application/json", false},
		{[]string{"application/jsonx"}, "application/json", false},
		{[]string{"garbage;;;"}, "application/json", false},
		{nil, "application/json", false},
		{[]string{"Application/JSON"}, "application/json", true},
		{[]string{"TEXT/*"}, "text/event-stream", true},
		{[]string{"text/*x"}, "text/event-stream", false},
		{[]string{"texts/*"}, "text/event-stream", false},
	} {
		if got := accepts(tc.values, tc.typ); got != tc.want {
			t.Errorf("accepts(%q, %s): got %v; want %v", tc.values, tc.typ, got, tc.want)
		}
	}
}

// TestAcceptsCommonAllocs holds the shortcut for what clients send: the
// Accept and Content-Type checks of a POST allocate nothing.
func TestAcceptsCommonAllocs(t *testing.T) {
	accept := []string{"application/json, text/event-stream"}
	if n := testing.AllocsPerRun(100, func() {
		if !accepts(accept, ctJSON) || !accepts(accept, ctEventSSE) || !isJSONContentType("application/json") {
			t.Fatal("the common headers were refused")
		}
	}); n != 0 {
		t.Errorf("the checks of a common POST allocate %v times; want 0", n)
	}
}

// FuzzHTTPHeaders feeds untrusted header values to the parsers that judge
// them: none may panic, and their verdicts must be consistent.
func FuzzHTTPHeaders(f *testing.F) {
	for _, s := range []string{"localhost:80", "[::1]:1", "http://127.0.0.1:8080", "null", "1-2", "0-0", "text/event-stream;q=0", "Bearer x", "%zz", "[", "-1-1"} {
		f.Add(s)
	}
	c := newChecker(Options{AllowedHosts: []string{"a.example"}, AllowedOrigins: []string{"https://a.example"}, AuthToken: "t"})
	f.Fuzz(func(t *testing.T, s string) {
		if name := hostName(strings.ToLower(s)); name != "" && c.hostAllowed(s) && !isLoopbackName(name) && name != "a.example" {
			t.Errorf("host %q (name %q) allowed", s, name)
		}
		if c.origin(s, "") == nil {
			u, err := url.Parse(s)
			if err != nil || !isLoopbackName(strings.ToLower(u.Hostname())) && strings.ToLower(u.Scheme+"://"+u.Host) != "https://a.example" {
				t.Errorf("origin %q allowed", s)
			}
		}
		accepts([]string{s}, "application/json")
		for _, typ := range []string{ctJSON, ctEventSSE} {
			// The shortcut says yes only to what ParseMediaType reads as
			// the same bare type.
			part := strings.TrimSpace(s)
			if bareMatch(part, typ, typ[:strings.IndexByte(typ, '/')]) {
				if mt, params, err := mime.ParseMediaType(part); err != nil || len(params) != 0 || mt != strings.ToLower(part) {
					t.Errorf("bareMatch(%q, %s): ParseMediaType reads %q %v %v", part, typ, mt, params, err)
				}
			}
		}
		if mt, _, err := mime.ParseMediaType(s); isJSONContentType(s) != (err == nil && mt == "application/json") {
			t.Errorf("isJSONContentType(%q) differs from ParseMediaType's verdict", s)
		}
		if num, seq, ok := parseEventID(s); ok {
			n2, s2, ok2 := parseEventID(string(appendEventID(nil, num, seq)))
			if !ok2 || n2 != num || s2 != seq || num < 0 || seq < 0 {
				t.Errorf("event id %q: parsed %d-%d, which does not round-trip", s, num, seq)
			}
		}
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", s)
		if c.authorized(r) {
			if scheme, tok, _ := strings.Cut(s, " "); !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) != "t" {
				t.Errorf("authorization %q accepted", s)
			}
		}
	})
}
