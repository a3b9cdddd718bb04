package host

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestAbandonedRoundLeavesNothing (issue 38): a 2026-07-28 round whose
// client never retries holds nothing in the server: everything the round
// knows travels in its requestState, so once input_required is answered
// no request is in flight, no request to the client is pending, and the
// plugin serves the next call. Rounds abandoned one after another leave
// nothing either.
func TestAbandonedRoundLeavesNothing(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, Options{RequestStateKey: []byte("k1")})
	c := startClient(t, srv)
	caps := meta2026(`{"sampling":{},"elicitation":{}}`)
	ask := `"arguments":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	for i := range 20 {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_ask",%s,%s}}`, i+1, ask, caps)
		var r struct {
			ResultType string `json:"resultType"`
		}
		if w := c.next(); json.Unmarshal(w.Result, &r) != nil || r.ResultType != "input_required" {
			t.Fatalf("round %d: got %s; want input_required", i, w.raw)
		}
		if err := <-fx.PeerErr; !errors.Is(err, errInputPending) {
			t.Fatalf("round %d: the plugin's request got %v; want the input-pending error", i, err)
		}
		held := 0
		srv.eachSession(func(s *session) {
			s.mu.Lock()
			held += len(s.inflight) + len(s.pending)
			s.mu.Unlock()
		})
		if held != 0 {
			t.Fatalf("after abandoned round %d: the server holds %d requests in flight or pending; want none", i, held)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"still here"},%s}}`, caps)
	if w := c.next(); w.Error != nil || len(w.Result) == 0 {
		t.Fatalf("a call after the abandoned rounds: got %s; want a result", w.raw)
	}
}
