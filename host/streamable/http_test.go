package streamable

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/hosttest"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// TestHTTPMatchesStdio sends the same requests over stdio and over
// Streamable HTTP: every response is the same bytes, because both
// transports feed the same session code.
func TestHTTPMatchesStdio(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"test_media"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://readme"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"test_greet","arguments":{"name":"Ada"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"nope"}`,
		`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":7}}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
	}
	for _, ver := range []string{"2025-11-25", "2025-06-18", "2024-11-05"} {
		t.Run(ver, func(t *testing.T) {
			sc := startClient(t, srv)
			sc.initialize(ver, `{}`)
			hc := startHTTP(t, srv, Options{}).client()
			hc.initialize(ver, `{}`)
			for _, req := range requests {
				sc.send("%s", req)
				want := string(sc.next().raw)
				if got := hc.call(req); got != want {
					t.Errorf("%s\nHTTP:  %s\nstdio: %s", req, got, want)
				}
			}
		})
	}
}

// TestHTTPExactPayloads pins the bytes of a session's first exchanges.
func TestHTTPExactPayloads(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{Name: "mcphost-test", Version: "1.2.3"})
	ht := startHTTP(t, srv, Options{})
	c := ht.client()
	resp := c.post(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	body := readAll(t, resp)
	want := `{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-11-25","capabilities":{"completions":{},"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}},"serverInfo":{"name":"mcphost-test","version":"1.2.3"}}}`
	if resp.StatusCode != 200 || body != want {
		t.Fatalf("initialize: got %d %s\nwant 200 %s", resp.StatusCode, body, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("initialize Content-Type: got %q; want application/json", ct)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if len(sid) < 20 || strings.IndexFunc(sid, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		t.Fatalf("session id %q: want at least 20 visible ASCII characters", sid)
	}
	c.session, c.version = sid, "2025-11-25"
	c.notify(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range []struct{ req, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_ask","arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"plugin \"test\" tool \"ask\": guest error: sampling/createMessage: not supported by the client: the client did not declare the sampling capability"}],"isError":true}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid log level \"loud\": want one of debug, info, notice, warning, error, critical, alert, emergency"}}`},
	} {
		if got := c.call(tc.req); got != tc.want {
			t.Errorf("%s\ngot  %s\nwant %s", tc.req, got, tc.want)
		}
	}
}

// TestHTTPHostFunctionsWithoutCapability: a plugin asking a client that
// did not declare the capability gets an error at once, and the POST is
// answered with JSON (nothing was streamed).
func TestHTTPHostFunctionsWithoutCapability(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	c := startHTTP(t, srv, Options{}).client()
	c.initialize("2025-11-25", `{"sampling":{}}`)
	for _, tc := range []struct{ method, params, want string }{
		{"roots/list", `null`, "did not declare the roots capability"},
		{"elicitation/create", `{"message":"?","requestedSchema":{"type":"object"}}`, "did not declare elicitation (form mode)"},
		{"sampling/createMessage", `{"messages":[],"maxTokens":1,"tools":[]}`, "did not declare sampling.tools"},
	} {
		got := c.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_ask","arguments":{"method":%q,"params":%s}}}`, tc.method, tc.params))
		if !strings.Contains(got, tc.want) || !strings.Contains(got, `"isError":true`) {
			t.Errorf("%s: got %s; want an isError result saying %q", tc.method, got, tc.want)
		}
		if err := recv(t, fx.PeerErr, "the peer's error"); err == nil {
			t.Errorf("%s: the plugin's request succeeded; want ErrNotSupported", tc.method)
		}
	}
}

// TestHTTPProgressAndLoggingBeforeResult: messages a call emits go on its
// POST's SSE stream, after a priming event and before the result.
func TestHTTPProgressAndLoggingBeforeResult(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	c := startHTTP(t, srv, Options{Retry: 1500 * time.Millisecond}).client()
	c.initialize("2025-11-25", `{}`)
	if got := c.call(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("setLevel: got %s", got)
	}
	s := c.stream(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"test_progress","_meta":{"progressToken":"tok"}}}`)
	prime := s.next()
	if prime.id == "" || prime.data != "" || prime.retry != "1500" {
		t.Errorf("first event: got %+v; want a priming event (id, empty data, retry 1500)", prime)
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"total":2,"message":"step 1","progressToken":"tok"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2,"total":2,"message":"step 2","progressToken":"tok"}}`,
		`{"jsonrpc":"2.0","id":"p","result":{"content":[{"type":"text","text":"progressed"}]}}`,
	}
	for i, w := range want {
		if got := s.message(); got != w {
			t.Errorf("event %d:\ngot  %s\nwant %s", i+1, got, w)
		}
	}
	if rest := s.end(); len(rest) != 0 {
		t.Errorf("after the result: got %v; want the stream to end", rest)
	}

	s = c.stream(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_log"}}`)
	want = []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"test","data":"at info"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"test","data":"at error"}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"logged"}]}}`,
	}
	for i, w := range want {
		if got := s.message(); got != w {
			t.Errorf("log event %d:\ngot  %s\nwant %s", i+1, got, w)
		}
	}
	s.end()
}

// TestHTTPNoPrimingBefore20251125: older clients get SSE without the
// empty-data priming event, which they may not understand.
func TestHTTPNoPrimingBefore20251125(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	c := startHTTP(t, srv, Options{}).client()
	c.initialize("2025-06-18", `{}`)
	s := c.stream(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_progress","_meta":{"progressToken":7}}}`)
	ev := s.next()
	if ev.data == "" || ev.id == "" || msgMethod(ev.data) != "notifications/progress" {
		t.Errorf("first event: got %+v; want the first progress notification, with an id", ev)
	}
	events := s.end()
	if n := len(events); n != 2 || !strings.Contains(events[1].data, `"result"`) {
		t.Errorf("then: got %+v; want the second progress and the result", events)
	}
}

// TestHTTPSamplingRoundTrip: a plugin's sampling request goes out on the
// call's stream; the client answers with a POST (202), and the result
// follows on the same stream.
func TestHTTPSamplingRoundTrip(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	c := startHTTP(t, srv, Options{}).client()
	c.initialize("2025-11-25", `{"sampling":{}}`)
	s := c.stream(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"test_ask","arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}}`)
	req := s.message()
	if want := `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`; req != want {
		t.Fatalf("got %s; want %s", req, want)
	}
	c.notify(`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`)
	if err := recv(t, fx.PeerErr, "the peer's result"); err != nil {
		t.Fatalf("sampling: %v", err)
	}
	got := s.message()
	want := `{"jsonrpc":"2.0","id":"call","result":{"content":[{"type":"text","text":"{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hello\"},\"model\":\"m\"}"}]}}`
	if got != want {
		t.Errorf("result:\ngot  %s\nwant %s", got, want)
	}
	s.end()
}

// TestHTTPCancelledRequestEndsStream: a request the client cancels gets
// no response, and its POST ends instead of hanging.
func TestHTTPCancelledRequestEndsStream(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	c := startHTTP(t, srv, Options{}).client()
	c.initialize("2025-11-25", `{}`)
	done := c.background(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_slow"}}`)
	recv(t, fx.Started, "the slow call")
	c.notify(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}`)
	if err := recv(t, fx.Cancelled, "the plugin's cancellation"); err == nil {
		t.Fatal("the plugin call was not cancelled")
	}
	if got, want := recv(t, done, "the POST's response"), "200 text/event-stream "; got != want {
		t.Errorf("cancelled POST: got %q; want %q (an empty stream)", got, want)
	}
	// The id is free again.
	if got := c.call(`{"jsonrpc":"2.0","id":"slow","method":"ping"}`); got != `{"jsonrpc":"2.0","id":"slow","result":{}}` {
		t.Errorf("reusing the id: got %s", got)
	}
}

// TestHTTPListChangedAfterSwap: a hot reload (Registry.Swap) reaches the
// client's GET stream as list_changed notifications.
func TestHTTPListChangedAfterSwap(t *testing.T) {
	reg := loadRegistry(t, newFixture(), "test")
	srv := host.New(reg, host.Options{Logger: quietLog})
	defer srv.Close()
	c := startHTTP(t, srv, Options{}).client()
	c.initialize("2025-11-25", `{}`)
	get := c.get()
	if ev := get.next(); ev.id == "" || ev.data != "" || ev.retry == "" {
		t.Fatalf("first GET event: got %+v; want a priming event", ev)
	}
	g := buildGeneration(t, config.Spec{Name: "echo", Native: plugins.NativeModule(echoExports())})
	if ch := reg.Swap(context.Background(), g); !ch.Tools {
		t.Fatalf("swap: got %+v; want tools changed", ch)
	}
	got := map[string]bool{}
	for range 3 {
		got[get.message()] = true
	}
	for _, k := range []string{"tools", "resources", "prompts"} {
		if msg := `{"jsonrpc":"2.0","method":"notifications/` + k + `/list_changed"}`; !got[msg] {
			t.Errorf("after the swap: got %v; want %s", got, msg)
		}
	}
	if list := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !strings.Contains(list, `"echo_echo"`) {
		t.Errorf("tools/list after the swap: got %s; want the new tool", list)
	}
}

// TestHTTPResourceUpdatedOnGETStream: resources/updated for a subscribed
// URI reaches the standalone stream.
func TestHTTPResourceUpdatedOnGETStream(t *testing.T) {
	fx := newFixture()
	reg := loadRegistry(t, fx, "test")
	srv := host.New(reg, host.Options{Logger: quietLog})
	t.Cleanup(srv.Close)
	c := startHTTP(t, srv, Options{}).client()
	c.initialize("2025-11-25", `{}`)
	c.call(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://readme"}}`)
	get := c.get()
	// Both plugins again, loaded anew: the same lists (no list_changed),
	// and every resource of theirs updated.
	reg.Swap(context.Background(), buildGeneration(t,
		config.Spec{Name: "test", Native: plugins.NativeModule(fx.TestExports())},
		config.Spec{Name: "other", Native: plugins.NativeModule(hosttest.OtherExports())}))
	if got, want := get.message(), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://readme"}}`; got != want {
		t.Errorf("got %s; want %s", got, want)
	}
}

// TestHTTPBatch: batches are served only on sessions that negotiated
// 2025-03-26, and their answer is one array.
func TestHTTPBatch(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	old := ht.client()
	old.initialize("2025-03-26", `{}`)
	got := old.call(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"b"}}},{"jsonrpc":"2.0","id":3}]`)
	want := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"b"}]}},{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: missing \"method\""}}]`
	if got != want {
		t.Errorf("batch:\ngot  %s\nwant %s", got, want)
	}
	old.notify(`[{"jsonrpc":"2.0","method":"notifications/progress","params":{}}]`)
	resp := old.post(`[]`)
	if body := readAll(t, resp); resp.StatusCode != 400 || !strings.Contains(body, `-32600`) {
		t.Errorf("empty batch: got %d %s; want 400 -32600", resp.StatusCode, body)
	}

	cur := ht.client()
	cur.initialize("2025-11-25", `{}`)
	resp = cur.post(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	if body := readAll(t, resp); resp.StatusCode != 400 || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("batch on 2025-11-25: got %d %s; want 400 -32600", resp.StatusCode, body)
	}
}

// TestHTTPSessionsIsolated: two sessions never see each other's
// messages, streams or pending requests.
func TestHTTPSessionsIsolated(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	ht := startHTTP(t, srv, Options{})
	a, b := ht.client(), ht.client()
	a.initialize("2025-11-25", `{"sampling":{}}`)
	b.initialize("2025-11-25", `{"sampling":{}}`)
	for _, c := range []*httpClient{a, b} {
		c.call(`{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"debug"}}`)
	}
	getA, getB := a.get(), b.get()
	getA.next() // priming
	getB.next()

	// A's call waits on a sampling request with id 1.
	sa := a.stream(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_ask","arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}}}`)
	sa.next() // priming
	if m := sa.message(); msgMethod(m) != "sampling/createMessage" {
		t.Fatalf("A: got %s; want its sampling request", m)
	}
	// B answers "request 1": its own session has none, so A's call must
	// go on waiting.
	b.notify(`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"from B"},"model":"b"}}`)
	// B cannot resume A's stream: event ids name streams of a session.
	resp := b.do(http.MethodGet, ht.url, "", "Last-Event-ID", "1-1")
	if body := readAll(t, resp); resp.StatusCode != 400 {
		t.Errorf("B resuming A's stream: got %d %s; want 400", resp.StatusCode, body)
	}
	// Messages about A's requests stay on A's streams.
	sb := b.stream(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_log"}}`)
	for _, ev := range sb.end() {
		if strings.Contains(ev.data, "sampling") || strings.Contains(ev.data, `"from B"`) {
			t.Errorf("B's stream carried %s", ev.data)
		}
	}
	a.notify(`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"from A"},"model":"a"}}`)
	if res := sa.message(); !strings.Contains(res, `from A`) {
		t.Errorf("A's result: got %s; want A's own answer", res)
	}
	// A broadcast reaches both GET streams, and is the first thing each
	// sees: nothing of the other session came before it.
	srv.Notify("info", "mcphost", "hello both")
	want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"mcphost","data":"hello both"}}`
	for name, g := range map[string]*sseStream{"A": getA, "B": getB} {
		if got := g.message(); got != want {
			t.Errorf("%s's GET stream: got %s; want %s", name, got, want)
		}
	}
	if err := recv(t, fx.PeerErr, "A's sampling result"); err != nil {
		t.Errorf("A's sampling: %v", err)
	}
}
