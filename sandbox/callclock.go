package sandbox

import (
	"context"
	"sync"
	"time"
)

// callClock is the context of the calls a polled instance serves: the
// request's context with the call's deadline. One timer, made with the
// instance's first call and reset for each, ends the call at its
// deadline, and one context.AfterFunc on the request's context (when it
// can end at all) ends it when the caller gives up. It stands in for a
// context.WithTimeout per call, whose timer, context, children map and
// Done channel were about half of the bytes a call allocated, and it
// interrupts the guest itself, so the poll hangs no AfterFunc of its own.
//
// The AfterFunc costs a call ~500 bytes too (its context, and the
// request context's children map and Done channel), so it is hung only
// when the call outlives watchAfter or a host function asks for Done:
// most calls end sooner and allocate nothing for their context. A guest
// that computes is therefore stopped up to watchAfter after its caller
// gives up; a guest blocked in a host function, at once; Err is always
// exact.
//
// Blocking host functions take the call's deadline from it like from any
// context: Deadline, Done (a channel made only when one is asked for) and
// Err. Only instances whose guest the loop poll stops use it: wazero's
// close-on-done watches a call's context after the call, and those keep
// context.WithTimeout.
//
// When the request ends first (the caller gave up), the call's context is
// done at once, so blocking host functions return and the guest can ask
// whether it was cancelled (cancel.go), but the guest is interrupted
// only after the module's cancel grace (never past the call's own
// deadline): a guest that returns within it keeps its instance. The
// call's own deadline interrupts at once.
//
// A callClock is reused from call to call, so nothing may keep it past the
// call it was given to; the host functions that start goroutines stop them
// before they return. Between calls it reports context.Canceled.
type callClock struct {
	timer    *time.Timer // ticks at watchAfter, then at the deadline; made once
	onCancel func()      // c.cancel, bound once: AfterFunc takes a func

	mu       sync.Mutex
	parent   context.Context // the request's; nil between calls
	deadline time.Time       // the earlier of own and the request's
	own      time.Time       // the call's own deadline (its module's timeout)
	grace    time.Duration   // how long a guest whose caller gave up may still run
	err      error
	expired  bool          // the call's own deadline ended it
	told     bool          // the request ended it: the guest runs on until stopAt
	stopAt   time.Time     // when a told guest is interrupted
	stopping bool          // the guest is to be interrupted (onEnd ran or is due)
	done     chan struct{} // made when asked for; closed when the call ends
	stop     func() bool   // the AfterFunc on parent, once hung
	onEnd    func()        // interrupts the guest (poll.onDone); set by arm
}

// watchAfter is how long a call runs before its clock hangs an AfterFunc
// on the request's context.
const watchAfter = time.Millisecond

var _ context.Context = (*callClock)(nil)

// start begins a call bounded by parent and by d from now. The call's
// deadline is the earlier of its own and the request's, as with
// context.WithTimeout; a guest whose request ends first is interrupted
// grace later (at its own deadline at the latest).
func (c *callClock) start(parent context.Context, d, grace time.Duration) {
	now := time.Now()
	own := now.Add(d)
	deadline := own
	if pd, ok := parent.Deadline(); ok && pd.Before(deadline) {
		deadline = pd
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parent, c.deadline, c.own, c.grace, c.err, c.expired, c.done, c.onEnd = parent, deadline, own, grace, nil, false, nil, nil
	c.told, c.stopAt, c.stopping = false, time.Time{}, false
	first := min(deadline.Sub(now), watchAfter) // one clock read a call
	if c.timer == nil {
		c.timer = time.AfterFunc(first, c.tick)
		c.onCancel = c.cancel
	} else {
		c.timer.Reset(first)
	}
}

// finish ends the call; after it returns, neither the timer nor the
// request's context ends anything. A timer or AfterFunc already running
// finds the call over (or the next call under way, which it serves as
// its own tick would) and does nothing wrong.
func (c *callClock) finish() {
	c.mu.Lock()
	c.timer.Stop()
	stop := c.stop
	c.stop, c.parent, c.onEnd = nil, nil, nil
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil {
			close(c.done)
		}
	}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// tick is the timer's: at the call's own deadline it ends the call;
// before it (the call has run watchAfter, or the request's earlier
// deadline came) it ends the call if the request is over, else hangs
// the AfterFunc and waits for the call's own deadline.
func (c *callClock) tick() {
	c.mu.Lock()
	if c.parent == nil || c.stopping {
		c.mu.Unlock()
		return
	}
	now := time.Now()
	if c.err != nil { // told: the grace runs
		if now.Before(c.stopAt) {
			c.timer.Reset(c.stopAt.Sub(now))
			c.mu.Unlock()
			return
		}
		c.interruptNow()
		return
	}
	if !now.Before(c.own) {
		c.expired = true
		c.end(context.DeadlineExceeded, false)
		return
	}
	if err := c.parent.Err(); err != nil {
		c.end(err, true)
		return
	}
	// The request's deadline, when it is the earlier, is the request's
	// to enforce: its own timer ends it, and the AfterFunc this call. This
	// timer may tick first, and the request must not then look alive to
	// whoever sorts the failure (a caller's deadline is a cancellation,
	// not the plugin's timeout).
	c.watchLocked()
	c.timer.Reset(c.own.Sub(now))
	c.mu.Unlock()
}

// watchLocked hangs the AfterFunc on the request's context, once a call,
// with c.mu held and the call running.
func (c *callClock) watchLocked() {
	if c.stop == nil && c.parent.Done() != nil {
		c.stop = context.AfterFunc(c.parent, c.onCancel)
	}
}

// watch makes f, the poll's interrupt, run when the call ends; at once if
// it has ended already.
func (c *callClock) watch(f func()) {
	c.mu.Lock()
	due := c.stopping
	c.onEnd = f
	c.mu.Unlock()
	if due {
		f()
	}
}

// cancelled says the request ended the call before it returned (the
// guest was told, and given the grace). It holds until the next start.
func (c *callClock) cancelled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.told
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
	c.end(err, true)
}

// end records why the call ended, with c.mu held, and unlocks it.
// byRequest says the request ended it: the guest is interrupted only when
// the grace has run, by the timer; otherwise at once.
func (c *callClock) end(err error, byRequest bool) {
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if byRequest {
		c.told = true
		now := time.Now()
		if c.stopAt = now.Add(c.grace); c.own.Before(c.stopAt) {
			c.stopAt = c.own
		}
		if now.Before(c.stopAt) {
			c.timer.Reset(c.stopAt.Sub(now))
			c.mu.Unlock()
			return
		}
	}
	c.interruptNow()
}

// interruptNow interrupts the guest, with c.mu held, and unlocks it.
func (c *callClock) interruptNow() {
	c.stopping = true
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
//
// Whoever waits on it is woken when the request ends, too: asking for it
// hangs the AfterFunc at once.
func (c *callClock) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	if c.err == nil && c.parent != nil {
		c.watchLocked()
	}
	return c.done
}

// Err says why the call ended, or nil while it runs. It asks the
// request's context, so it is exact before any AfterFunc is hung.
func (c *callClock) Err() error {
	c.mu.Lock()
	if c.err == nil && c.parent != nil {
		if err := c.parent.Err(); err != nil {
			c.end(err, true) // unlocks
			c.mu.Lock()
		}
	}
	err := c.err
	c.mu.Unlock()
	return err
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
