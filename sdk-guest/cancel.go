package guest

import (
	"context"
	"fmt"
	"time"
)

// A *Context is a context.Context whose Done and Err say whether the
// client has cancelled the call (notifications/cancelled, a closed
// connection): pass it to code that takes one, and check it in long
// loops. The host then gives the call the plugin's cancel_grace to
// return (1s unless configured): a handler that returns in time keeps the
// plugin's instance, and the state it holds; one still running after the
// grace is stopped and its instance replaced.
//
// A Wasm guest runs one thread, and nothing can close a channel while a
// handler computes, so the host is asked when the handler asks: each call
// of Err or Done asks it once (a cheap host call) and Done's channel is
// closed by the question that finds the call cancelled. A goroutine that
// only blocks on <-ctx.Done() is not woken; select on it with a default,
// or with a time.After, whose sleep the host cuts short on cancellation.
var _ context.Context = (*Context)(nil)

// canceller is a HostFuncs that can tell whether the call it serves has
// been cancelled: mcphost's (abi.CallCancelled), or a test's. A host
// without it never cancels.
type canceller interface {
	Cancelled() bool
}

// callCancelled asks the host whether the call being served has been
// cancelled.
func callCancelled() bool {
	c, ok := currentHost().(canceller)
	return ok && c.Cancelled()
}

// Deadline reports none: the host enforces the plugin's timeout itself.
func (c *Context) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done returns a channel closed once the call is found cancelled. Each
// call of Done asks the host (see the type's comment).
func (c *Context) Done() <-chan struct{} {
	if c.done == nil {
		c.done = make(chan struct{})
	}
	c.Err()
	return c.done
}

// Err returns context.Canceled once the client has cancelled the call,
// else nil. It asks the host until the answer is yes.
func (c *Context) Err() error {
	if !c.cancelled && callCancelled() {
		c.cancelled = true
		if c.done != nil {
			close(c.done)
		}
	}
	if c.cancelled {
		return context.Canceled
	}
	return nil
}

// Value returns nil: a Context carries the request in its fields.
func (c *Context) Value(any) any { return nil }

// errCancelled is what the SDK's host helpers return instead of asking
// the host anything once the call is cancelled.
func errCancelled(what string) error {
	return fmt.Errorf("%s: call cancelled by the client: %w", what, context.Canceled)
}
