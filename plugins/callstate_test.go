package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/sandbox"
)

// countPeer counts the notifications that reach it.
type countPeer struct{ n int }

func (p *countPeer) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("not asked")
}

func (p *countPeer) Notify(context.Context, string, json.RawMessage) error { p.n++; return nil }

// TestCallContexts: a tool call's context and its module call's carry the
// peer (the module call's wraps the client's in its flood limits), the
// notes and the allow_once answers to whoever asks below them, pass every
// other key and the request's deadline and cancellation through, and cost
// one allocation each.
func TestCallContexts(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	client := &countPeer{}
	c := &core{name: "p"}
	tc := newToolCall(parent, client)
	mc := newModuleCall(tc, c)
	// Below the module call, as the sandbox's host functions see it.
	below := context.WithValue(mc, struct{}{}, 1)

	if got := sandbox.PeerFrom(tc); got != client {
		t.Errorf("tool call's peer %v; want the client's", got)
	}
	lp, ok := sandbox.PeerFrom(below).(*listPeer)
	if !ok || lp != &mc.peer || lp.inner != client {
		t.Fatalf("module call's peer %#v; want its listPeer over the client's", sandbox.PeerFrom(below))
	}
	if mc.peer.limit.call != nil {
		t.Error("a call that sent nothing has a flood bucket; want it made at the first message")
	}
	for i := range callBurst + 5 {
		if err := lp.Notify(below, "notifications/message", json.RawMessage(`{}`)); err != nil {
			t.Fatalf("notify %d: %v", i, err)
		}
	}
	if client.n != callBurst || mc.peer.limit.dropped.Load() != 5 {
		t.Errorf("%d notifications reached the client, %d dropped; want the call's burst %d, and 5", client.n, mc.peer.limit.dropped.Load(), callBurst)
	}

	if consent.NotesFrom(below) != &tc.notes {
		t.Error("notes below the module call: want the tool call's")
	}
	if consent.OnceFrom(below) != &mc.once || consent.OnceFrom(newModuleCall(tc, c)) == &mc.once || consent.OnceFrom(tc) != nil {
		t.Error("allow_once answers: want them kept by their module call and no other")
	}
	if below.Value(key{}) != "v" {
		t.Error("a key of the request's: lost below the calls")
	}
	if d, ok := below.Deadline(); !ok || time.Until(d) < time.Minute {
		t.Errorf("deadline %v, %v; want the request's", d, ok)
	}
	stopped := make(chan struct{})
	context.AfterFunc(below, func() { close(stopped) })
	cancel()
	<-stopped
	if !errors.Is(below.Err(), context.Canceled) {
		t.Errorf("err %v after the request was cancelled; want context.Canceled", below.Err())
	}

	if n := testing.AllocsPerRun(100, func() { _ = newModuleCall(newToolCall(parent, client), c) }); n != 1 {
		t.Errorf("%v allocations for a tool call's contexts; want 1", n)
	}
}
