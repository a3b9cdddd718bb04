package streamable

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcphost/mcphost/host/auth"
)

// TestOAuthOwner: with [auth], what a caller creates belongs to its
// identity (issuer and subject), not to whoever holds its id. Alice's
// 2025-era session, opened with the official Go SDK, answers Bob's valid
// token as an unknown session would (404), for every method, and logs
// the attempt naming both; Alice with a refreshed token still uses it.
// Tasks likewise: a refreshed token reaches them, another user's token
// finds "unknown task".
func TestOAuthOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an OpenID Provider")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build internal/tools/testop")
	}
	alice := opClient{ID: "alice", Secret: "s1"}
	bob := opClient{ID: "bob", Secret: "s2"}
	op := startOP(t, alice, bob)
	as := startAuthServer(t, auth.Config{
		Issuers: []string{op.issuer},
		Scopes:  []auth.ScopeRule{{Scope: "echo:use", Globs: []string{"test_echo"}}},
	}, nil, "tasks")
	bobToken := op.token(t, bob, as.resource, "echo:use") // valid, and holding every scope needed

	t.Run("session", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		cc := clientcredentials.Config{ClientID: alice.ID, ClientSecret: alice.Secret, TokenURL: op.issuer + "/oauth/token",
			Scopes: []string{"echo:use"}, EndpointParams: map[string][]string{"resource": {as.resource}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: as.url, HTTPClient: cc.Client(ctx)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		sid := cs.ID()
		if sid == "" {
			t.Fatal("no session id")
		}
		call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"%s"}}}`
		stolen := []struct{ name, method, body string }{
			{"tools/call", http.MethodPost, strings.Replace(call, "%s", "stolen", 1)},
			{"tools/list", http.MethodPost, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`},
			{"notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`},
			{"standalone stream", http.MethodGet, ""},
			{"delete", http.MethodDelete, ""},
		}
		for _, tc := range stolen {
			status, body := inSession(t, tc.method, as.url, bobToken, sid, tc.body)
			if status != http.StatusNotFound || !strings.Contains(body, "Session not found") {
				t.Errorf("Bob's %s in Alice's session: got %d %s; want 404 Session not found", tc.name, status, body)
			}
		}
		refused := as.log.Matching("WARN session refused")
		if len(refused) != len(stolen) {
			t.Errorf("got %d refusals logged; want %d:\n%s", len(refused), len(stolen), strings.Join(as.log.All(), "\n"))
		}
		for _, line := range refused {
			if !strings.Contains(line, `owner=sub "alice"`) || !strings.Contains(line, `caller=sub "bob"`) || !strings.Contains(line, op.issuer) ||
				strings.Contains(line, sid) || strings.Contains(line, bobToken) {
				t.Errorf("refusal logged as %q; want both identities named, and neither the session id nor a token", line)
			}
		}
		// The session is Alice's still, with the SDK's token or a fresh one.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"msg": "still mine"}})
		if err != nil || sdkText(t, res) != "still mine" {
			t.Fatalf("Alice after Bob's attempts: %v %+v", err, res)
		}
		refreshed := op.token(t, alice, as.resource, "echo:use")
		if status, body := inSession(t, http.MethodPost, as.url, refreshed, sid, strings.Replace(call, "%s", "refreshed", 1)); status != 200 || !strings.Contains(body, `"text":"refreshed"`) {
			t.Errorf("Alice with a refreshed token: got %d %s; want the echo", status, body)
		}
		if audit := as.audit.String(); strings.Contains(audit, "stolen") {
			t.Errorf("Bob's call reached the session:\n%s", audit)
		}
	})

	t.Run("2024-11-05 session", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, strings.Replace(as.url, "/mcp", "/sse", 1), nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+op.token(t, alice, as.resource))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var endpoint string
		for sc := bufio.NewScanner(resp.Body); endpoint == "" && sc.Scan(); {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				endpoint = data
			}
		}
		if !strings.HasPrefix(endpoint, "/messages?sessionId=") {
			t.Fatalf("GET /sse: %d, endpoint %q", resp.StatusCode, endpoint)
		}
		messages := strings.Replace(as.url, "/mcp", endpoint, 1)
		initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`
		before := len(as.log.Matching("WARN session refused"))
		if status, body := inSession(t, http.MethodPost, messages, bobToken, "", initialize); status != http.StatusNotFound {
			t.Errorf("Bob's POST to Alice's /messages: got %d %s; want 404", status, body)
		}
		if n := len(as.log.Matching("WARN session refused")) - before; n != 1 {
			t.Errorf("got %d refusals logged; want 1", n)
		}
		if status, body := inSession(t, http.MethodPost, messages, op.token(t, alice, as.resource), "", initialize); status != http.StatusAccepted {
			t.Errorf("Alice's POST with a refreshed token: got %d %s; want 202", status, body)
		}
	})

	t.Run("task", func(t *testing.T) {
		first := op.token(t, alice, as.resource, "echo:use")
		_, _, body := post(t, as.url, first, "tools/call", `"name":"test_progress","arguments":{}`, "test_progress")
		var created struct {
			Result struct {
				ResultType string `json:"resultType"`
				TaskID     string `json:"taskId"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &created); err != nil || created.Result.ResultType != "task" || created.Result.TaskID == "" {
			t.Fatalf("tools/call test_progress: %s; want a task", body)
		}
		id := created.Result.TaskID
		params := `"taskId":"` + id + `"`
		refreshed := op.token(t, alice, as.resource)
		if refreshed == first {
			t.Fatal("testop issued the same token twice")
		}
		if status, _, body := post(t, as.url, refreshed, "tasks/get", params, id); status != 200 || !strings.Contains(body, `"taskId":"`+id+`"`) {
			t.Errorf("tasks/get with Alice's refreshed token: %d %s; want her task", status, body)
		}
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			if _, _, body := post(t, as.url, bobToken, method, params, id); !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "unknown task") {
				t.Errorf("%s with Bob's token: %s; want -32602 unknown task", method, body)
			}
		}
	})
}

// inSession sends a request of a 2025-era session with a bearer token and
// returns the status and body (none of an SSE stream, which would not end).
func inSession(t *testing.T, method, url, token, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && method == http.MethodGet {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
