package host

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// Caller is who sent a request, as the transport authenticated it (the
// HTTP transport's OAuth bearer tokens). A transport attaches it to the
// ctx it gives [Conn.Handle] with [WithCaller]; the core then records it
// in the audit log and shows and serves only what May allows. Without a
// Caller everything is allowed (stdio, or HTTP without [auth]).
type Caller struct {
	Subject  string // the token's sub
	ClientID string // its client_id or azp
	// May reports whether the caller may use the tool, prompt or resource
	// template with this (exposed) name; nil allows all.
	May func(name string) bool
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the Caller ctx carries, or nil.
func CallerOf(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

func (c *Caller) may(name string) bool { return c == nil || c.May == nil || c.May(name) }

// forbidden refuses a request the caller's token does not unlock. The HTTP
// transport refuses such requests itself with 403 before they get here;
// this is what a request addressed by a plugin's own name (server_id)
// gets, since only the core knows the exposed name it maps to.
func forbidden(kind, name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Forbidden: the access token's scopes do not unlock " + kind + " " + name}
}
