package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestHostFunctionRouting calls every host function from the guest and
// checks what the Peer received and what the guest got back.
func TestHostFunctionRouting(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	const reply = `{"from":"peer"}`
	tests := []struct {
		fn, payload string
		kind        string // "request" or "notify"
		method      string
	}{
		{abi.HostLog, `{"level":"info","data":"hi"}`, "notify", "notifications/message"},
		{abi.HostProgress, `{"progress":1,"total":2}`, "notify", "notifications/progress"},
		{abi.HostSample, `{"messages":[],"maxTokens":5}`, "request", "sampling/createMessage"},
		{abi.HostElicit, `{"message":"name?"}`, "request", "elicitation/create"},
		{abi.HostListRoots, ``, "request", "roots/list"},
		{abi.HostToolListChanged, ``, "notify", "notifications/tools/list_changed"},
		{abi.HostPromptListChanged, ``, "notify", "notifications/prompts/list_changed"},
		{abi.HostResourceListChanged, ``, "notify", "notifications/resources/list_changed"},
		{abi.HostResourceUpdated, `{"uri":"file:///x"}`, "notify", "notifications/resources/updated"},
		{abi.HostURLElicitComplete, `{"elicitationId":"e1"}`, "notify", "notifications/elicitation/complete"},
	}
	routed := 0
	for _, f := range abi.HostFuncs {
		if f.Method != "" {
			routed++
		}
	}
	if len(tests) != routed {
		t.Fatalf("test covers %d host functions; the table routes %d to the Peer", len(tests), routed)
	}
	for _, tc := range tests {
		t.Run(tc.fn, func(t *testing.T) {
			peer := &fakePeer{reply: json.RawMessage(reply)}
			out, err := m.Call(WithPeer(context.Background(), peer), "host", hostCall(tc.fn, tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			calls := peer.Calls()
			if len(calls) != 1 {
				t.Fatalf("peer got %d calls; want 1", len(calls))
			}
			c := calls[0]
			if c.kind != tc.kind || c.method != tc.method || string(c.params) != tc.payload {
				t.Errorf("peer got %s %s %s; want %s %s %s", c.kind, c.method, c.params, tc.kind, tc.method, tc.payload)
			}
			want := ""
			if tc.kind == "request" {
				want = reply
			}
			if string(out) != want {
				t.Errorf("guest got %q; want %q", out, want)
			}
		})
	}
}

// TestHostFunctionFailures: a request with no Peer, or whose Peer fails,
// answers {"error":…}; a notification is dropped; neither fails the call.
func TestHostFunctionFailures(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	tests := []struct {
		name, fn string
		peer     Peer
		want     string // the guest's reply
	}{
		{"request without peer", abi.HostSample, nil, ErrNoPeer.Error()},
		{"request, peer fails", abi.HostListRoots, &fakePeer{err: errors.New("client has no roots")}, "client has no roots"},
		{"notification without peer", abi.HostToolListChanged, nil, ""},
		{"notification, peer fails", abi.HostLog, &fakePeer{err: errors.New("closed")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.peer != nil {
				ctx = WithPeer(ctx, tc.peer)
			}
			out, err := m.Call(ctx, "host", hostCall(tc.fn, `{"level":"info","data":1}`))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(out) != 0 {
					t.Errorf("guest got %q; want nothing", out)
				}
				return
			}
			var he abi.HostError
			if err := json.Unmarshal(out, &he); err != nil || he.Error != tc.want {
				t.Errorf("guest got %s (%v); want {\"error\":%q}", out, err, tc.want)
			}
		})
	}
}

func TestHostFunctionBadPayload(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	peer := &fakePeer{reply: json.RawMessage(`{}`)}
	out, err := m.Call(WithPeer(context.Background(), peer), "host", []byte(`{"fn":"create_message","raw":"not json"}`))
	if err != nil {
		t.Fatal(err)
	}
	if calls := peer.Calls(); len(calls) != 0 {
		t.Errorf("peer got %+v; want no call", calls)
	}
	var he abi.HostError
	if err := json.Unmarshal(out, &he); err != nil || he.Error != errBadPayload.Error() {
		t.Errorf("guest got %s (%v); want {\"error\":%q}", out, err, errBadPayload)
	}
}

// TestHostFunctionConsentKey: a guest's elicitation or sampling request
// that holds the host's reserved consent input key (abi.HoldsConsentKey)
// never reaches the client, and the guest is told why; one with its own
// key goes through.
func TestHostFunctionConsentKey(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	tests := []struct {
		name, fn, payload string
		refused           bool
	}{
		{"elicit, reserved key", abi.HostElicit, `{"message":"ok?","_meta":{"io.mcphost/inputKey":"io.mcphost/consent:fetch:evil:443"}}`, true},
		{"sample, escaped key", abi.HostSample, `{"messages":[],"maxTokens":5,"_meta":{"io.mcphost/inputKey":"io.mcphost\/consent:x"}}`, true},
		{"elicit, own key", abi.HostElicit, `{"message":"pick","_meta":{"io.mcphost/inputKey":"color"}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			peer := &fakePeer{reply: json.RawMessage(`{"action":"accept"}`)}
			out, err := m.Call(WithPeer(context.Background(), peer), "host", hostCall(tc.fn, tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.refused {
				want = 0
			}
			if n := len(peer.Calls()); n != want {
				t.Errorf("peer got %d requests; want %d", n, want)
			}
			var he abi.HostError
			_ = json.Unmarshal(out, &he)
			if got := he.Error == errConsentKey.Error(); got != tc.refused {
				t.Errorf("guest got %s; want refused = %v", out, tc.refused)
			}
		})
	}
}
