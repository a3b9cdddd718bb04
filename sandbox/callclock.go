package sandbox

import (
	"context"
	"sync"
	"time"
)

// callClock is the context of the calls a polled instance serves: the
// request's context with the call's deadline. One timer, made with the
// instance's first call and reset for each, ends the call at its deadline,
// and one context.AfterFunc on the request's context (when it can end at
// all) ends it when the caller gives up. It stands in for a
// context.WithTimeout per call, whose timer, context, children map and
// Done channel were about half of the bytes a call allocated, and it
// interrupts the guest itself, so the poll hangs no AfterFunc of its own.
//
// Blocking host functions take the call's deadline from it like from any
// context: Deadline, Done (a channel made only when one is asked for) and
// Err. Only instances whose guest the loop poll stops use it: wazero's
// close-on-done watches a call's context after the call, and those keep
// context.WithTimeout.
//
// A callClock is reused from call to call, so nothing may keep it past the
// call it was given to; the host functions that start goroutines stop them
// before they return. Between calls it reports context.Canceled.
type callClock struct {
	timer    *time.Timer // ends the call at its deadline; made once
	onCancel func()      // c.cancel, bound once: AfterFunc takes a func

	mu       sync.Mutex
	parent   context.Context // the request's; nil between calls
	deadline time.Time
	err      error
	expired  bool          // the call's own deadline ended it
	done     chan struct{} // made when asked for; closed when the call ends
	stop     func() bool   // the AfterFunc on parent
	onEnd    func()        // interrupts the guest (poll.onDone); set by arm
}

var _ context.Context = (*callClock)(nil)

// start begins a call bounded by parent and by d from now.
// The call's deadline is the earlier of its own and the request's, as
// with context.WithTimeout.
func (c *callClock) start(parent context.Context, d time.Duration) {
	deadline := time.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	c.mu.Lock()
	c.parent, c.deadline, c.err, c.expired, c.done, c.onEnd = parent, deadline, nil, false, nil, nil
	c.mu.Unlock()
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.expire)
		c.onCancel = c.cancel
	} else {
		c.timer.Reset(d)
	}
	if parent.Done() != nil {
		c.stop = context.AfterFunc(parent, c.onCancel)
	}
}

// finish ends the call; after it returns, neither the timer nor the
// request's context ends anything. A timer or AfterFunc already running
// finds the call over (or the next call's deadline ahead) and does
// nothing.
func (c *callClock) finish() {
	c.timer.Stop()
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.mu.Lock()
	c.parent, c.onEnd = nil, nil
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil {
			close(c.done)
		}
	}
	c.mu.Unlock()
}

// watch makes f, the poll's interrupt, run when the call ends; at once if
// it has ended already.
func (c *callClock) watch(f func()) {
	c.mu.Lock()
	ended := c.err != nil
	c.onEnd = f
	c.mu.Unlock()
	if ended {
		f()
	}
}

// expire is the timer's: the call's deadline has passed, unless the timer
// fired late for a call that is over.
func (c *callClock) expire() {
	c.mu.Lock()
	if c.parent == nil || c.err != nil || time.Now().Before(c.deadline) {
		c.mu.Unlock()
		return
	}
	c.expired = true
	c.end(context.DeadlineExceeded)
}

// cancel is the request context's AfterFunc: the caller gave up, or the
// request's own deadline passed (the call ends with the request's error,
// as a child context does), unless the AfterFunc ran late for a call
// that is over.
func (c *callClock) cancel() {
	c.mu.Lock()
	var err error
	if c.parent != nil {
		err = c.parent.Err()
	}
	if err == nil {
		c.mu.Unlock()
		return
	}
	c.end(err)
}

// end records why the call ended, with c.mu held, and unlocks it.
func (c *callClock) end(err error) {
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	f := c.onEnd
	c.mu.Unlock()
	if f != nil {
		f()
	}
}

// Deadline is the call's.
func (c *callClock) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, true
}

// Done is closed when the call ends: its deadline, its caller giving up,
// or its return.
func (c *callClock) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

// Err says why the call ended, or nil while it runs.
func (c *callClock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value is the request's, except that once the call's own deadline has
// passed the context package's cancel key finds nothing, so that
// context.Cause reports the deadline, not the request's (nil) cause. That
// key is the only *int key asked for here; TestCallClock holds the
// assumption.
func (c *callClock) Value(key any) any {
	c.mu.Lock()
	parent, expired := c.parent, c.expired
	c.mu.Unlock()
	if parent == nil {
		return nil
	}
	if _, ok := key.(*int); ok && expired {
		return nil
	}
	return parent.Value(key)
}
