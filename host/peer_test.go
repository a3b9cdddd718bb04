package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/internal/protocol"
)

func TestPeerProgressKeepsTokenType(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	tests := []struct {
		name   string
		params string
		v      protocol.Version
		want   string // "" means nothing is sent
	}{
		{"number", `{"_meta":{"progressToken":7}}`, protocol.V20251125, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"message":"m","progressToken":7}}`},
		{"big number", `{"_meta":{"progressToken":12345678901234567890123}}`, protocol.V20251125, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"message":"m","progressToken":12345678901234567890123}}`},
		{"string", `{"_meta":{"progressToken":"7"}}`, protocol.V20251125, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"message":"m","progressToken":"7"}}`},
		{"old version drops message", `{"_meta":{"progressToken":1}}`, protocol.V20241105, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":1}}`},
		{"no token", `{"name":"x"}`, protocol.V20251125, ""},
		{"no params", ``, protocol.V20251125, ""},
		{"token of a bad type", `{"_meta":{"progressToken":{"a":1}}}`, protocol.V20251125, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, out := newTestSession(t, srv, tt.v, clientCaps{})
			req, ok := withParams(&request{sess: s, id: json.RawMessage(`"r"`)}, []byte(tt.params))
			if !ok {
				t.Fatalf("params %s are not JSON", tt.params)
			}
			if err := req.peer().Notify(context.Background(), "notifications/progress", json.RawMessage(`{"progress":1,"message":"m"}`)); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			out.mu.Lock()
			rel := slices.Clone(out.rel)
			out.mu.Unlock()
			got := strings.Join(out.take(), "\n")
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			for _, r := range rel { // for HTTP: on the request's own stream
				if r != `"r"` {
					t.Fatalf("sent related to %q; want the request id \"r\"", r)
				}
			}
		})
	}
}

func TestPeerNotifyGating(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	s, out := newTestSession(t, srv, protocol.V20250618, clientCaps{})
	req := &request{sess: s, id: json.RawMessage(`1`)}
	p := req.peer()
	ctx := context.Background()
	s.subs["test://sub"] = struct{}{}
	s.level.Store(int32(3) + 1) // warning

	tests := []struct {
		method, params string
		sent           bool
	}{
		{"notifications/message", `{"level":"info","data":"x"}`, false},
		{"notifications/message", `{"level":"error","data":"x"}`, true},
		{"notifications/resources/updated", `{"uri":"test://other"}`, false},
		{"notifications/resources/updated", `{"uri":"test://sub"}`, true},
		{"notifications/tools/list_changed", ``, true},
		{"notifications/elicitation/complete", `{"elicitationId":"e"}`, false}, // 2025-11-25 only
	}
	for _, tt := range tests {
		var params json.RawMessage
		if tt.params != "" {
			params = json.RawMessage(tt.params)
		}
		if err := p.Notify(ctx, tt.method, params); err != nil {
			t.Fatalf("Notify(%s): %v", tt.method, err)
		}
		got := out.take()
		if (len(got) == 1) != tt.sent || len(got) > 1 {
			t.Errorf("Notify(%s, %s): sent %v; want sent=%v", tt.method, tt.params, got, tt.sent)
		}
	}
	if err := p.Notify(ctx, "sampling/createMessage", nil); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Notify of a request method: got %v; want ErrNotSupported", err)
	}
	req.done.Store(true)
	if err := p.Notify(ctx, "notifications/message", json.RawMessage(`{"level":"error","data":"late"}`)); err != nil || len(out.take()) != 0 {
		t.Errorf("Notify after the response: got err %v or a message; want nothing sent", err)
	}
}

func TestPeerRequestWithoutCapabilityFailsAtOnce(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	all := clientCaps{sampling: true, roots: true, elicitForm: true, elicitURL: true, samplingTools: true}
	tests := []struct {
		name   string
		v      protocol.Version
		caps   clientCaps
		method string
		params string
	}{
		{"sampling without capability", protocol.V20251125, clientCaps{roots: true}, "sampling/createMessage", `{"messages":[],"maxTokens":1}`},
		{"sampling tools without sampling.tools", protocol.V20251125, clientCaps{sampling: true}, "sampling/createMessage", `{"messages":[],"maxTokens":1,"tools":[]}`},
		{"roots without capability", protocol.V20251125, clientCaps{sampling: true}, "roots/list", ``},
		{"elicitation before 2025-06-18", protocol.V20250326, all, "elicitation/create", `{"message":"m"}`},
		{"url elicitation before 2025-11-25", protocol.V20250618, all, "elicitation/create", `{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}`},
		{"url elicitation with form only", protocol.V20251125, clientCaps{elicitForm: true}, "elicitation/create", `{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}`},
		{"form elicitation with url only", protocol.V20251125, clientCaps{elicitURL: true}, "elicitation/create", `{"message":"m"}`},
		{"not a client method", protocol.V20251125, all, "tools/call", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, out := newTestSession(t, srv, tt.v, tt.caps)
			req := &request{sess: s, id: json.RawMessage(`1`)}
			var params json.RawMessage
			if tt.params != "" {
				params = json.RawMessage(tt.params)
			}
			// A context that never ends: if Request waited, the test would hang.
			_, err := req.peer().Request(context.Background(), tt.method, params)
			if !errors.Is(err, ErrNotSupported) {
				t.Fatalf("Request: got %v; want ErrNotSupported", err)
			}
			if got := out.take(); len(got) != 0 {
				t.Fatalf("Request sent %v; want nothing", got)
			}
		})
	}
}

func TestParseClientCaps(t *testing.T) {
	tests := []struct {
		raw  string
		want clientCaps
	}{
		{`{}`, clientCaps{}},
		{`{"sampling":{},"roots":{"listChanged":true}}`, clientCaps{sampling: true, roots: true, rootsLC: true}},
		{`{"elicitation":{}}`, clientCaps{elicitForm: true}},
		{`{"elicitation":{"url":{}}}`, clientCaps{elicitURL: true}},
		{`{"elicitation":{"form":{},"url":{}}}`, clientCaps{elicitForm: true, elicitURL: true}},
		{`{"sampling":{"tools":{}}}`, clientCaps{sampling: true, samplingTools: true}},
	}
	for _, tt := range tests {
		got, err := parseClientCaps(json.RawMessage(tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("parseClientCaps(%s) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

// TestPeerRequestRoundTrip runs a tool that asks the client through the
// Peer: the request goes out with a fresh id, the client's answer (or
// error) comes back to the tool.
func TestPeerRequestRoundTrip(t *testing.T) {
	fx := newFixture()
	c := startClient(t, newServer(t, fx, Options{}))
	c.initialize("2025-11-25", `{"sampling":{},"roots":{}}`)

	c.send(`{"jsonrpc":"2.0","id":"t1","method":"tools/call","params":{"name":"test_ask","arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}}`)
	req := c.next()
	if req.Method != "sampling/createMessage" || req.ID == nil || string(req.Params) != `{"messages":[],"maxTokens":5}` {
		t.Fatalf("got %s; want the sampling request", req.raw)
	}
	c.send(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}}`, req.ID)
	if err := recv(t, fx.PeerErr, "the tool's Request to return"); err != nil {
		t.Fatalf("Request: %v", err)
	}
	if w := c.next(); string(w.ID) != `"t1"` || !strings.Contains(string(w.Result), `sampled`) {
		t.Fatalf("got %s; want the tool's result carrying the client's answer", w.raw)
	}

	c.send(`{"jsonrpc":"2.0","id":"t2","method":"tools/call","params":{"name":"test_ask","arguments":{"method":"roots/list"}}}`)
	req = c.next()
	c.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-1,"message":"user said no"}}`, req.ID)
	var ce *ClientError
	if err := recv(t, fx.PeerErr, "the tool's Request to return"); !errors.As(err, &ce) || ce.Code != -1 {
		t.Fatalf("Request: got %v; want a *ClientError with code -1", err)
	}
	if w := c.next(); string(w.ID) != `"t2"` || !strings.Contains(string(w.Result), `"isError":true`) {
		t.Fatalf("got %s; want an isError result", w.raw)
	}
}

// TestPeerRequestCancelled: when the tool call is cancelled while its
// Peer request waits, the client is told to cancel that request too, and
// the tool call gets no response.
func TestPeerRequestCancelled(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, Options{})
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{"roots":{}}`)
	c.send(`{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"test_ask","arguments":{"method":"roots/list"}}}`)
	req := c.next()
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"t"}}`)
	w := c.next()
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	json.Unmarshal(w.Params, &p)
	if w.Method != "notifications/cancelled" || string(p.RequestID) != string(req.ID) {
		t.Fatalf("got %s; want notifications/cancelled for request %s", w.raw, req.ID)
	}
	if err := recv(t, fx.PeerErr, "the tool's Request to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Request: got %v; want context.Canceled", err)
	}
	onlySession(t, srv).wg.Wait()
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if w := c.next(); string(w.ID) != `"p"` {
		t.Fatalf("got %s; want only the ping's response (the cancelled call gets none)", w.raw)
	}
}

func TestPeerRequestFailsWhenClientGone(t *testing.T) {
	fx := newFixture()
	c := startClient(t, newServer(t, fx, Options{}))
	c.initialize("2025-11-25", `{"roots":{}}`)
	c.send(`{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"test_ask","arguments":{"method":"roots/list"}}}`)
	c.next() // the roots/list request
	c.in.Close()
	if err := recv(t, fx.PeerErr, "the tool's Request to return"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Request after EOF: got %v; want ErrClosed", err)
	}
	if w := c.next(); string(w.ID) != `"t"` || !strings.Contains(string(w.Result), `"isError":true`) {
		t.Fatalf("got %s; want the tool's error result", w.raw)
	}
}
