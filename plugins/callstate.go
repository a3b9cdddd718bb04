package plugins

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/sandbox"
)

// The values a call carries through its context (the client's Peer for
// the host functions, the call's notes, its allow_once answers) ride on
// one context value per layer, made once for the call with everything it
// holds, instead of a context.WithValue and an allocation for each: they
// were a fifth of the bytes a tools/call allocated.

// toolCall is the context of one Tool.run: the request's, carrying the
// client's peer for the module call (sandbox.PeerFrom, core.call) and the
// notes the result must add (addNote).
type toolCall struct {
	context.Context
	peer  sandbox.Peer
	notes consent.Notes
	// first is the context of the call's first module call, made with
	// the tool call's so that a tool call costs one allocation for both.
	first     moduleCall
	firstUsed atomic.Bool
}

func newToolCall(ctx context.Context, peer sandbox.Peer) *toolCall {
	return &toolCall{Context: ctx, peer: peer}
}

func (c *toolCall) Value(key any) any {
	if consent.IsNotesKey(key) {
		return &c.notes
	}
	if sandbox.IsPeerKey(key) {
		return c.peer
	}
	return c.Context.Value(key)
}

// moduleCall is the context of one module call (core.call): its peer
// (a listPeer over the caller's, with the call's own flood bucket, made
// at its first message) and its allow_once answers (consent's Allow).
type moduleCall struct {
	context.Context
	peer listPeer
	once consent.Once
}

func newModuleCall(ctx context.Context, c *core) *moduleCall {
	var m *moduleCall
	if tc, ok := ctx.(*toolCall); ok && tc.firstUsed.CompareAndSwap(false, true) {
		m = &tc.first
		m.Context = ctx
	} else {
		m = &moduleCall{Context: ctx}
	}
	m.peer = listPeer{inner: sandbox.PeerFrom(ctx), signal: c.signal}
	m.peer.limit.plugin = c.root().flood.bucket()
	return m
}

func (m *moduleCall) Value(key any) any {
	if consent.IsOnceKey(key) {
		return &m.once
	}
	if sandbox.IsPeerKey(key) {
		return sandbox.Peer(&m.peer)
	}
	return m.Context.Value(key)
}

// listPeer is the sandbox.Peer a plugin's calls run with: it keeps the
// list_changed notifications for the Manager and passes everything else
// to the client's Peer (inner, nil outside any client request).
// Everything it passes on is rate-limited (flood.go).
type listPeer struct {
	inner  sandbox.Peer
	signal func() // nil for cores that cannot signal (tests)
	limit  limiter
}

func (p *listPeer) Notify(ctx context.Context, method string, params json.RawMessage) error {
	switch method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		if p.signal != nil {
			p.signal()
		}
		return nil
	}
	if p.inner == nil {
		return sandbox.ErrNoPeer
	}
	if !p.limit.allow() {
		return nil // counted; the call's closing message reports it
	}
	return p.inner.Notify(ctx, method, params)
}

func (p *listPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if p.inner == nil {
		return nil, sandbox.ErrNoPeer
	}
	return p.inner.Request(ctx, method, params)
}
