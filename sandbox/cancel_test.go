package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/wasmgen"
)

// cancelWasm keeps a count in its instance (count), heeds a cancellation
// (wait: loops until mcphost:host/call cancelled says 1), waits in a host
// function knowing nothing of cancellation (roots) and ignores it (spin).
var cancelWasm = wasmgen.Module(
	wasmgen.Func{Name: "count", Counter: true},
	wasmgen.Func{Name: "wait", UntilCancelled: true},
	wasmgen.Func{Name: "roots", Roots: true},
	wasmgen.Func{Name: "spin", Spin: true},
)

// askedCtx is a request's context that says when it is first asked
// whether it has ended: acquire asks once it holds an instance, and the
// call then reaches the guest whatever the answer of later questions, so
// a test that cancels after asked cancels a call under way.
type askedCtx struct {
	context.Context
	asked chan struct{}
	once  sync.Once
}

func (a *askedCtx) Err() error {
	err := a.Context.Err()
	a.once.Do(func() { close(a.asked) })
	return err
}

// TestCancelGrace: a call whose caller gives up is told and given the
// module's CancelGrace. A guest that heeds it (asks cancelled) or that
// returns on its own (its host function returns when the request ends)
// keeps its instance, and the count its state, and the log says so; one
// that ignores it is stopped after the grace, its instance replaced, and
// the log says that. The call fails with ErrCanceled either way. On both
// interrupt mechanisms.
func TestCancelGrace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, export string
		grace        time.Duration
		kept         bool
		log          string
	}{
		{"heeds", "wait", time.Hour, true, "cancelled call returned within the grace: instance and its state kept"},
		{"returns on its own", "roots", time.Hour, true, "cancelled call returned within the grace: instance and its state kept"},
		{"ignores", "spin", 20 * time.Millisecond, false, "cancelled call did not return within the grace: instance stopped and replaced"},
	}
	for _, c := range cases {
		for _, mode := range modes {
			t.Run(c.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				m := loadMode(t, cancelWasm, Limits{Instances: 1, Timeout: time.Hour, CancelGrace: c.grace}, mode.intr)
				count := func(want string) {
					t.Helper()
					if out, err := m.Call(context.Background(), "count", nil); err != nil || countOf(out) != want {
						t.Fatalf("count: got %s, %v; want %s", countOf(out), err, want)
					}
				}
				count("1")
				count("2")
				inner, cancel := context.WithCancel(context.Background())
				defer cancel()
				req := &askedCtx{Context: inner, asked: make(chan struct{})}
				// roots waits in the Peer until the request ends; the
				// Peer's ctx under close-on-done stays open for the grace.
				peer := &fakePeer{onRequest: func(ctx context.Context, _ string) error {
					select {
					case <-ctx.Done():
					case <-inner.Done():
					}
					return context.Cause(inner)
				}}
				done := make(chan error, 1)
				go func() { // ends when the call does
					_, err := m.Call(WithPeer(req, peer), c.export, nil)
					done <- err
				}()
				<-req.asked
				cancel()
				err := <-done
				ce := callErr(t, err)
				if !errors.Is(err, ErrCanceled) {
					t.Fatalf("cancelled %s: got %v; want kind %v", c.export, err, KindCanceled)
				}
				if !c.kept && !strings.Contains(ce.Detail, "did not return within the cancel grace ("+c.grace.String()+")") {
					t.Errorf("detail: got %q; want it to name the grace it outran", ce.Detail)
				}
				wantDiscarded, next := uint64(0), "3"
				if !c.kept {
					wantDiscarded, next = 1, "1"
				}
				if s := m.Stats(); s.Discarded != wantDiscarded {
					t.Errorf("discarded: got %d; want %d", s.Discarded, wantDiscarded)
				}
				count(next)
				ctx, stop := context.WithTimeout(context.Background(), time.Minute)
				defer stop()
				if !testLogs.WaitLine(ctx, c.log, "plugin="+t.Name()) {
					t.Errorf("no log line %q for plugin=%s", c.log, t.Name())
				}
			})
		}
	}
}

// countOf reads a wasmgen Counter's output, a little-endian uint32.
func countOf(out []byte) string {
	if len(out) != 4 {
		return fmt.Sprintf("%q", out)
	}
	return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(out)), 10)
}

// TestReturnedAfterDeadline: a guest that outlives the call's own timeout
// in a host function that gives up at the deadline, and then returns
// normally before any interrupt reaches it, still fails the call with
// ErrTimeout: the time limit holds whichever way the guest ends. Its
// instance is not kept (the interrupt was raised at the deadline, or
// wazero closed the instance): a new one serves the next call.
func TestReturnedAfterDeadline(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			m := loadMode(t, cancelWasm, Limits{Instances: 1, Timeout: 50 * time.Millisecond}, mode.intr)
			if out, err := m.Call(context.Background(), "count", nil); err != nil || countOf(out) != "1" {
				t.Fatalf("count: got %s, %v; want 1", countOf(out), err)
			}
			peer := &fakePeer{onRequest: func(ctx context.Context, _ string) error {
				<-ctx.Done() // the call's deadline
				return ctx.Err()
			}}
			_, err := m.Call(WithPeer(context.Background(), peer), "roots", nil)
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("roots past the deadline: got %v; want kind %v", err, KindTimeout)
			}
			if out, err := m.Call(context.Background(), "count", nil); err != nil || countOf(out) != "1" {
				t.Errorf("count after: got %s, %v; want 1 (a new instance)", countOf(out), err)
			}
		})
	}
}
