package streamable

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// meta2026 is the per-request _meta of a 2026-07-28 client with caps.
func meta2026(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// TestHTTPStateless: session-less POSTs of the 2026-07-28 era are served
// on their own, with the headers that mirror the body checked first.
func TestHTTPStateless(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	c.version = "2026-07-28"
	meta := meta2026(`{}`)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"},` + meta + `}}`
	tests := []struct {
		name       string
		method     string
		body       string
		hdr        []string
		status     int
		wantInBody string
	}{
		{"call", http.MethodPost, call, []string{"Mcp-Method", "tools/call", "Mcp-Name", "test_echo"}, 200, `"text":"hi"`},
		{"no Mcp-Method", http.MethodPost, call, []string{"Mcp-Name", "test_echo"}, 400, `-32020`},
		{"wrong Mcp-Name", http.MethodPost, call, []string{"Mcp-Method", "tools/call", "Mcp-Name", "test_ask"}, 400, `-32020`},
		{"version header differs", http.MethodPost, call, []string{"Mcp-Method", "tools/call", "Mcp-Name", "test_echo", "MCP-Protocol-Version", "2025-11-25"}, 400, `-32020`},
		{"unknown method", http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"nope/nope","params":{` + meta + `}}`, []string{"Mcp-Method", "nope/nope"}, 404, `-32601`},
		{"removed method", http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + meta + `}}`, []string{"Mcp-Method", "ping"}, 404, `-32601`},
		{"missing _meta", http.MethodPost, `{"jsonrpc":"2.0","id":4,"method":"server/discover"}`, []string{"Mcp-Method", "server/discover"}, 400, `-32602`},
		{"notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, []string{"Mcp-Method", "notifications/cancelled"}, 202, ``},
		{"GET", http.MethodGet, "", nil, 405, ``},
		{"DELETE", http.MethodDelete, "", nil, 405, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.do(tt.method, ht.url, tt.body, tt.hdr...)
			body := readAll(t, resp)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.wantInBody) {
				t.Errorf("got %d %s; want %d with %s", resp.StatusCode, body, tt.status, tt.wantInBody)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("got a session id; want none in the stateless era")
			}
		})
	}
	// A legacy client without a session still learns that it needs one.
	legacy := ht.client()
	resp := legacy.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if body := readAll(t, resp); resp.StatusCode != 400 || !strings.Contains(body, "Mcp-Session-Id header is required") {
		t.Errorf("legacy POST without a session: got %d %s; want 400 asking for a session", resp.StatusCode, body)
	}
}

// TestParamHeaders checks Mcp-Param-* against x-mcp-header arguments.
func TestParamHeaders(t *testing.T) {
	tests := []struct {
		value   string
		want    string
		wantErr bool
	}{
		{"Hello", "Hello", false},
		{"=?base64?SGVsbG8=?=", "Hello", false},
		{"=?base64?SGVsbG8?=", "", true},
		{"=?base64?SGVs!!!bG8=?=", "", true},
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", false},
		{"SGVsbG8=?=", "SGVsbG8=?=", false},
	}
	for _, tt := range tests {
		got, err := decodeParamHeader(tt.value)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("decodeParamHeader(%q) = %q, %v; want %q (error %v)", tt.value, got, err, tt.want, tt.wantErr)
		}
	}
}
