package sandbox

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestCallClock: the instance's clock ends a call at its deadline or when
// the request's context ends, the way context.WithTimeout did (Err, Done,
// Deadline, context.Cause), runs the poll's interrupt once, and ignores a
// timer or AfterFunc that fires late for a call that is over.
func TestCallClock(t *testing.T) {
	t.Parallel()
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		var c callClock
		fired := make(chan struct{})
		c.start(context.Background(), time.Millisecond, 0)
		c.watch(func() { close(fired) })
		<-c.Done()
		<-fired
		if got := c.Err(); got != context.DeadlineExceeded {
			t.Errorf("Err: got %v; want %v", got, context.DeadlineExceeded)
		}
		if got := context.Cause(&c); got != context.DeadlineExceeded {
			t.Errorf("context.Cause: got %v; want %v (callClock.Value must hide the request's cancel key)", got, context.DeadlineExceeded)
		}
		c.finish()
		if got := c.Err(); got != context.DeadlineExceeded {
			t.Errorf("Err after finish: got %v; want it kept: %v", got, context.DeadlineExceeded)
		}
	})
	t.Run("request's deadline ticks first", func(t *testing.T) {
		// The request's deadline is the earlier, and this clock's timer
		// ticks at it before the request's own timer has ended the
		// request: the call goes on until the request ends, with the
		// request's error, never as the call's own timeout.
		t.Parallel()
		parent := &lateDeadline{deadline: time.Now().Add(-time.Millisecond), done: make(chan struct{})}
		var c callClock
		c.start(parent, time.Hour, 0)
		c.tick()
		if err := c.Err(); err != nil || c.expired {
			t.Fatalf("after a tick at the request's deadline: Err %v, expired %v; want the call running until the request ends", err, c.expired)
		}
		if d, _ := c.Deadline(); !d.Equal(parent.deadline) {
			t.Errorf("Deadline: got %v; want the request's %v", d, parent.deadline)
		}
		parent.end(context.DeadlineExceeded)
		<-c.Done()
		if err := c.Err(); err != context.DeadlineExceeded || c.expired {
			t.Errorf("after the request's deadline: Err %v, expired %v; want the request's error, not expired", err, c.expired)
		}
		c.finish()
	})
	t.Run("request canceled", func(t *testing.T) {
		t.Parallel()
		cause := errors.New("client sent notifications/cancelled")
		parent, cancel := context.WithCancelCause(context.Background())
		var c callClock
		c.start(parent, time.Hour, 0)
		fired := make(chan struct{})
		c.watch(func() { close(fired) })
		if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
			t.Errorf("Deadline: got %v, %v; want an hour from now", d, ok)
		}
		cancel(cause)
		<-c.Done()
		<-fired
		if got := c.Err(); got != context.Canceled {
			t.Errorf("Err: got %v; want %v", got, context.Canceled)
		}
		if got := context.Cause(&c); got != cause {
			t.Errorf("context.Cause: got %v; want the request's: %v", got, cause)
		}
		c.finish()
	})
	t.Run("request canceled, guest computing", func(t *testing.T) {
		// Nobody asks for Done: the clock notices at watchAfter.
		t.Parallel()
		parent, cancel := context.WithCancel(context.Background())
		var c callClock
		c.start(parent, time.Hour, 0)
		fired := make(chan struct{})
		c.watch(func() { close(fired) })
		cancel()
		<-fired
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		if err != context.Canceled {
			t.Errorf("err: got %v; want %v", err, context.Canceled)
		}
		c.finish()
	})
	t.Run("request canceled, Err asked first", func(t *testing.T) {
		t.Parallel()
		parent, cancel := context.WithCancel(context.Background())
		var c callClock
		c.start(parent, time.Hour, 0)
		cancel()
		if got := c.Err(); got != context.Canceled {
			t.Errorf("Err right after the request's cancel: got %v; want %v, before any tick", got, context.Canceled)
		}
		c.finish()
	})
	t.Run("request deadline", func(t *testing.T) {
		t.Parallel()
		parent, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		want, _ := parent.Deadline()
		var c callClock
		c.start(parent, time.Hour, 0)
		if d, _ := c.Deadline(); !d.Equal(want) {
			t.Errorf("Deadline: got %v; want the request's, earlier: %v", d, want)
		}
		<-c.Done()
		if got := c.Err(); got != context.DeadlineExceeded {
			t.Errorf("Err: got %v; want the request's: %v", got, context.DeadlineExceeded)
		}
		c.finish()
	})
	t.Run("values", func(t *testing.T) {
		t.Parallel()
		type key struct{}
		var c callClock
		c.start(context.WithValue(context.Background(), key{}, "peer"), time.Hour, 0)
		if got := c.Value(key{}); got != "peer" {
			t.Errorf("Value during the call: got %v; want the request's", got)
		}
		c.finish()
		if got := c.Value(key{}); got != nil {
			t.Errorf("Value after the call: got %v; want nil", got)
		}
	})
	t.Run("late fire", func(t *testing.T) {
		t.Parallel()
		var c callClock
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		c.start(parent, time.Hour, 0)
		c.tick()   // a timer from an earlier call, late
		c.cancel() // an AfterFunc from an earlier request, late
		if err := c.Err(); err != nil {
			t.Errorf("Err after late fires: got %v; want nil while the call runs", err)
		}
		c.finish()
		if got := c.Err(); got != context.Canceled {
			t.Errorf("Err between calls: got %v; want %v", got, context.Canceled)
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done between calls is open; want it closed")
		}
		// The next call starts afresh.
		c.start(context.Background(), time.Hour, 0)
		if err := c.Err(); err != nil {
			t.Errorf("Err in the next call: got %v; want nil", err)
		}
		c.tick()
		if err := c.Err(); err != nil {
			t.Errorf("Err after a late timer in the next call: got %v; want nil", err)
		}
		c.finish()
	})
	t.Run("request canceled, within the grace", func(t *testing.T) {
		// The guest is told at once (Done, Err, cancelState) and not
		// interrupted while the grace runs; its return ends it all.
		t.Parallel()
		parent, cancel := context.WithCancel(context.Background())
		var c callClock
		c.start(parent, time.Hour, time.Hour)
		fired := make(chan struct{})
		c.watch(func() { close(fired) })
		cancel()
		<-c.Done()
		if got := c.Err(); got != context.Canceled {
			t.Errorf("Err: got %v; want %v", got, context.Canceled)
		}
		if told, stopped := cancelState(&c); !told || stopped {
			t.Errorf("cancelState in the grace: got told %v, stopped %v; want true, false", told, stopped)
		}
		if !requestEnded(&callContext{Context: &c}) {
			t.Error("requestEnded in the grace: got false; want true (the guest's cancelled host function says 1)")
		}
		c.tick() // an early tick of the timer does not cut the grace short
		select {
		case <-fired:
			t.Fatal("the guest was interrupted within the grace; want it left to return")
		default:
		}
		c.finish()
		if told, _ := cancelState(&c); !told {
			t.Error("cancelState after the call: got told false; want it kept until the next start")
		}
		c.start(context.Background(), time.Hour, time.Hour)
		if told, _ := cancelState(&c); told {
			t.Error("cancelState in the next call: got told true; want false")
		}
		c.finish()
	})
	t.Run("request canceled, grace runs out", func(t *testing.T) {
		t.Parallel()
		parent, cancel := context.WithCancel(context.Background())
		var c callClock
		c.start(parent, time.Hour, time.Millisecond)
		fired := make(chan struct{})
		c.watch(func() { close(fired) })
		cancel()
		<-fired
		if told, stopped := cancelState(&c); !told || !stopped {
			t.Errorf("cancelState after the grace: got told %v, stopped %v; want true, true", told, stopped)
		}
		if got := c.Err(); got != context.Canceled {
			t.Errorf("Err: got %v; want %v", got, context.Canceled)
		}
		c.finish()
	})
	t.Run("grace ends at the call's own deadline", func(t *testing.T) {
		t.Parallel()
		parent, cancel := context.WithCancel(context.Background())
		var c callClock
		c.start(parent, time.Hour, 2*time.Hour)
		cancel()
		<-c.Done()
		c.mu.Lock()
		stopAt, own := c.stopAt, c.own
		c.mu.Unlock()
		if !stopAt.Equal(own) {
			t.Errorf("the grace ends at %v; want the call's own deadline %v", stopAt, own)
		}
		c.finish()
	})
	t.Run("own deadline: no grace", func(t *testing.T) {
		t.Parallel()
		var c callClock
		c.start(context.Background(), time.Millisecond, time.Hour)
		fired := make(chan struct{})
		c.watch(func() { close(fired) })
		<-fired
		if told, _ := cancelState(&c); told {
			t.Error("cancelState at the call's own deadline: got told true; want false")
		}
		c.finish()
	})
	t.Run("watch after the end", func(t *testing.T) {
		t.Parallel()
		var c callClock
		c.start(context.Background(), time.Nanosecond, 0)
		<-c.Done()
		ran := false
		c.watch(func() { ran = true })
		if !ran {
			t.Error("watch after the deadline: the interrupt did not run; want it run at once")
		}
		c.finish()
	})
}

// TestCallClockAllocs: a call that ends before watchAfter allocates
// nothing for its clock once the instance's timer exists, whether or not
// its request can end. Under load a call may outlive watchAfter and pay
// for the AfterFunc, so the average is allowed to reach one.
func TestCallClockAllocs(t *testing.T) {
	var c callClock
	c.start(context.Background(), time.Hour, 0)
	c.finish()
	if n := testing.AllocsPerRun(100, func() {
		c.start(context.Background(), time.Hour, 0)
		c.finish()
	}); n != 0 {
		t.Errorf("allocs per call under context.Background: got %v; want 0", n)
	}
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	if n := testing.AllocsPerRun(100, func() {
		c.start(parent, time.Hour, 0)
		c.finish()
	}); n > 1 {
		t.Errorf("allocs per call under a cancelable context: got %v; want 0 (at most 1 under load)", n)
	}
}

// lateDeadline is a request context whose deadline has passed but whose
// timer has not yet ended it, until end.
type lateDeadline struct {
	context.Context
	deadline time.Time
	done     chan struct{}
	mu       sync.Mutex
	err      error
}

func (l *lateDeadline) Deadline() (time.Time, bool) { return l.deadline, true }
func (l *lateDeadline) Done() <-chan struct{}       { return l.done }
func (l *lateDeadline) Value(any) any               { return nil }

func (l *lateDeadline) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *lateDeadline) end(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
	close(l.done)
}
