package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/hosttest"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/reqstate"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/consent"
)

// meta2026 is the per-request _meta of a 2026-07-28 client with caps.
func meta2026(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// TestInputRequiredRounds runs a plugin that asks twice (sampling, then
// elicitation) through two input_required rounds: the second round's
// requestState carries the first answer, so the third request completes
// with both. A state replayed on another tool, an expired one and one
// signed with another key are -32602.
func TestInputRequiredRounds(t *testing.T) {
	srv := newServer(t, newFixture(), Options{RequestStateKey: []byte("k1")})
	c := startClient(t, srv)
	caps := meta2026(`{"sampling":{},"elicitation":{}}`)
	ask := `"arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_ask",%s,%s}}`, ask, caps)
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
		Content       []struct{ Text string }    `json:"content"`
	}
	w := c.next()
	if err := json.Unmarshal(w.Result, &r); err != nil || r.ResultType != "input_required" || r.InputRequests["sampling"] == nil || r.RequestState == "" {
		t.Fatalf("round 1: got %s; want input_required asking for sampling", w.raw)
	}
	state := r.RequestState
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_ask",%s,"inputResponses":{"sampling":{"model":"m","role":"assistant","content":{"type":"text","text":"yes"}}},"requestState":%q,%s}}`, ask, state, caps)
	w = c.next()
	r.Content = nil
	if err := json.Unmarshal(w.Result, &r); err != nil || r.ResultType != "complete" || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, `"yes"`) {
		t.Fatalf("round 2: got %s; want the sampled answer", w.raw)
	}

	tests := []struct {
		name, state string
	}{
		{"another tool", srv.state.Seal(reqstate.Body{Target: "tools/call test_echo", Expires: time.Now().Add(time.Hour).Unix()})},
		{"expired", srv.state.Seal(reqstate.Body{Target: "tools/call test_ask", Expires: time.Now().Add(-time.Second).Unix()})},
		{"another key", New(plugins.NewRegistry(), Options{Logger: quietLog, RequestStateKey: []byte("k2")}).state.Seal(reqstate.Body{Target: "tools/call test_ask", Expires: time.Now().Add(time.Hour).Unix()})},
		{"not base64", "!!.!!"},
		{"no signature", "e30"},
	}
	for i, tt := range tests {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_ask",%s,"requestState":%q,%s}}`, 10+i, ask, tt.state, caps)
		if w := c.next(); w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: got %s; want -32602", tt.name, w.raw)
		}
	}
}

// TestInputKeys: keys are the guest's when it names one, and the method's
// short name with a counter otherwise; the guest's key is not sent.
func TestInputKeys(t *testing.T) {
	in := &inputRound{responses: map[string]json.RawMessage{}, asked: map[string]json.RawMessage{}, counts: map[string]int{}, missing: map[string]bool{}}
	for _, p := range []string{`{"_meta":{"io.mcphost/inputKey":"name"},"message":"m"}`, `{"message":"a"}`, `{"message":"b","_meta":{"x":1,"io.mcphost/inputKey":"other"}}`, `{"message":"c"}`} {
		if _, err := in.ask("elicitation/create", json.RawMessage(p)); err == nil {
			t.Fatalf("ask %s: nil error; want errInputPending", p)
		}
	}
	want := map[string]string{
		"name":          `{"method":"elicitation/create","params":{"message":"m"}}`,
		"elicitation":   `{"method":"elicitation/create","params":{"message":"a"}}`,
		"other":         `{"method":"elicitation/create","params":{"message":"b","_meta":{"x":1}}}`,
		"elicitation-2": `{"method":"elicitation/create","params":{"message":"c"}}`,
	}
	for k, w := range want {
		if got := string(in.asked[k]); got != w {
			t.Errorf("asked[%q] = %s; want %s", k, got, w)
		}
	}
	if len(in.asked) != len(want) {
		t.Errorf("asked %d requests; want %d", len(in.asked), len(want))
	}
}

// TestListenStdio: subscriptions/listen over stdio is acknowledged first,
// delivers a reload's list_changed tagged with its id, and ends when the
// client cancels it (with no response: cancelled requests get none).
func TestListenStdio(t *testing.T) {
	reg := loadRegistry(t, newFixture(), "test")
	srv := New(reg, Options{Logger: quietLog})
	defer srv.Close()
	c := startClient(t, srv)
	c.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, meta2026(`{}`))
	w := c.next()
	if w.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(w.Params), `"io.modelcontextprotocol/subscriptionId":"sub"`) ||
		!strings.Contains(string(w.Params), `"toolsListChanged":true`) {
		t.Fatalf("got %s; want the acknowledgement of the filter first", w.raw)
	}
	g := buildGeneration(t, config.Spec{Name: "echo", Native: plugins.NativeModule(echoExports())})
	reg.Swap(context.Background(), g)
	w = c.next()
	if w.Method != "notifications/tools/list_changed" || !strings.Contains(string(w.Params), `"io.modelcontextprotocol/subscriptionId":"sub"`) {
		t.Errorf("got %s; want tools/list_changed tagged with the subscription", w.raw)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{%s}}`, meta2026(`{}`))
	if w := c.next(); string(w.ID) != "2" {
		t.Errorf("after cancelling the listen: got %s; want the discover result", w.raw)
	}
	if err := c.closeInput(); err != nil {
		t.Errorf("serveLines: %v", err)
	}
}

// TestListenerFilter: a listener hears only the kinds it asked for.
func TestListenerFilter(t *testing.T) {
	l := &listener{tools: true, uris: map[string]bool{"a://x": true}}
	tests := []struct {
		method, uri string
		want        bool
	}{
		{"notifications/tools/list_changed", "", true},
		{"notifications/prompts/list_changed", "", false},
		{"notifications/resources/list_changed", "", false},
		{"notifications/resources/updated", "a://x", true},
		{"notifications/resources/updated", "a://y", false},
		{"notifications/message", "", false},
	}
	for _, tt := range tests {
		if got := l.wants(tt.method, tt.uri); got != tt.want {
			t.Errorf("wants(%s, %q) = %v; want %v", tt.method, tt.uri, got, tt.want)
		}
	}
}

// TestPluginCacheHints: a 2026-07-28 resources/read carries the owning
// plugin's cache_ttl and cache_scope (else the server's); a list carries
// the most conservative of the plugins that contributed to it (the
// shortest ttl, "private" if any is private); an older client's results
// carry neither.
func TestPluginCacheHints(t *testing.T) {
	fx := newFixture()
	ttl := func(d time.Duration) *time.Duration { return &d }
	tests := []struct {
		name           string
		test, other    config.Spec // cache settings only
		server         Options
		method, params string
		wantTTL        int64
		wantScope      string
	}{
		{"read: the owner's", config.Spec{CacheTTL: ttl(10 * time.Minute), CacheScope: "public"}, config.Spec{CacheTTL: ttl(time.Second)},
			Options{CacheTTL: time.Minute, CacheScope: "private"}, "resources/read", `"uri":"test://readme",`, 600000, "public"},
		{"read: the server's where the owner sets none", config.Spec{}, config.Spec{CacheTTL: ttl(time.Second), CacheScope: "public"},
			Options{CacheTTL: time.Minute, CacheScope: "private"}, "resources/read", `"uri":"test://readme",`, 60000, "private"},
		{"read: a zero ttl is the owner's too", config.Spec{CacheTTL: ttl(0)}, config.Spec{},
			Options{CacheTTL: time.Minute, CacheScope: "public"}, "resources/read", `"uri":"test://items/7",`, 0, "public"},
		{"tools: the shortest ttl", config.Spec{CacheTTL: ttl(10 * time.Minute), CacheScope: "public"}, config.Spec{CacheTTL: ttl(2 * time.Minute), CacheScope: "public"},
			Options{CacheTTL: time.Hour, CacheScope: "private"}, "tools/list", "", 120000, "public"},
		{"prompts: private if any contributor is", config.Spec{CacheTTL: ttl(10 * time.Minute), CacheScope: "public"}, config.Spec{CacheScope: "private"},
			Options{CacheTTL: time.Hour, CacheScope: "public"}, "prompts/list", "", 600000, "private"},
		{"tools: the server's for a plugin that sets none", config.Spec{CacheTTL: ttl(10 * time.Minute), CacheScope: "public"}, config.Spec{},
			Options{CacheTTL: time.Minute, CacheScope: "private"}, "tools/list", "", 60000, "private"},
		{"templates: only the owner contributes", config.Spec{CacheTTL: ttl(10 * time.Minute), CacheScope: "public"}, config.Spec{CacheTTL: ttl(time.Second), CacheScope: "private"},
			Options{CacheTTL: time.Minute, CacheScope: "private"}, "resources/templates/list", "", 600000, "public"},
		{"resources: only the owner contributes", config.Spec{CacheTTL: ttl(3 * time.Second)}, config.Spec{CacheTTL: ttl(time.Second), CacheScope: "private"},
			Options{CacheTTL: time.Minute, CacheScope: "public"}, "resources/list", "", 3000, "public"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			test, other := tt.test, tt.other
			test.Name, test.Native = "test", plugins.NativeModule(fx.TestExports())
			other.Name, other.Native = "other", plugins.NativeModule(hosttest.OtherExports())
			reg := plugins.NewRegistry()
			reg.Swap(context.Background(), buildGeneration(t, test, other))
			t.Cleanup(func() { reg.Close(context.Background()) })
			opts := tt.server
			opts.Logger = quietLog
			srv := New(reg, opts)
			defer srv.Close()
			c := startClient(t, srv)
			c.send(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s%s}}`, tt.method, tt.params, meta2026(`{}`))
			w := c.next()
			var r struct {
				TTLMs      *int64 `json:"ttlMs"`
				CacheScope string `json:"cacheScope"`
			}
			if err := json.Unmarshal(w.Result, &r); err != nil || r.TTLMs == nil || *r.TTLMs != tt.wantTTL || r.CacheScope != tt.wantScope {
				t.Errorf("got %s; want ttlMs %d, cacheScope %q", w.raw, tt.wantTTL, tt.wantScope)
			}
			c.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			c.next()
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(`{"jsonrpc":"2.0","id":3,"method":%q,"params":{%s"_meta":{}}}`, tt.method, tt.params)
			if w := c.next(); w.Error != nil || strings.Contains(string(w.Result), "ttlMs") || strings.Contains(string(w.Result), "cacheScope") {
				t.Errorf("2025-11-25: got %s; want a result without caching hints", w.raw)
			}
			if err := c.closeInput(); err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		})
	}
}

// TestConsentRounds: a consent question (consent.Params) is one
// more input request, except that an answer the client sends before it
// was asked does not count (it is asked), an answer to it after a round
// that asked it does, and a client without elicitation gets the plugin's
// result, not -32021.
func TestConsentRounds(t *testing.T) {
	srv := newServer(t, newFixture(), Options{RequestStateKey: []byte("k1")})
	c := startClient(t, srv)
	caps := meta2026(`{"elicitation":{}}`)
	params, _ := json.Marshal(json.RawMessage(consent.Params("fetch", "example.com:443")))
	ask := `"arguments":{"method":"elicitation/create","params":` + string(params) + `}`
	key := "io.mcphost/consent:fetch:example.com:443"
	answer := `{"action":"accept","content":{"decision":"allow_always"}}`
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
		Content       []struct{ Text string }    `json:"content"`
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_ask",%s,"inputResponses":{%q:%s},%s}}`, ask, key, answer, caps)
	w := c.next()
	if err := json.Unmarshal(w.Result, &r); err != nil || r.ResultType != "input_required" || r.InputRequests[key] == nil {
		t.Fatalf("an unasked answer: got %s; want input_required asking %s", w.raw, key)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_ask",%s,"inputResponses":{%q:%s},"requestState":%q,%s}}`, ask, key, answer, r.RequestState, caps)
	w = c.next()
	r.Content = nil
	if err := json.Unmarshal(w.Result, &r); err != nil || r.ResultType != "complete" || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, "allow_always") {
		t.Fatalf("the asked answer: got %s; want it passed to the plugin", w.raw)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_ask",%s,%s}}`, ask, meta2026(`{}`))
	if w = c.next(); w.Error != nil {
		t.Errorf("no elicitation: got %s; want the plugin's result, not an error", w.raw)
	}
}
