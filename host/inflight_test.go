package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// chanOut delivers every message sent to it on a channel.
type chanOut chan string

func (o chanOut) Send(msg []byte, _ json.RawMessage) error {
	o <- string(msg)
	return nil
}

// HandleHere serves a request alone in flight on the calling goroutine:
// a quick one is answered before HandleHere returns, and the caller goes
// on reading. One still running after a moment has its caller's loop
// carried to a worker, where the next message (here its cancellation) is
// read while it runs; HandleHere then reports that the caller must stop
// reading. A request that starts beside another goes to a worker, so the
// caller reads on at once.
func TestHandleHere(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, Options{})
	out := make(chanOut, 16)
	c := srv.Connect(out, ConnInfo{ID: "t"})
	defer c.Close()
	ctx := t.Context()
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	recv(t, out, "initialize's answer")
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	// Whether the watchdog fires for a quick request depends on the
	// machine (under -race, an echo may run across two watchdog ticks): the
	// caller must read on exactly when carry was not called.
	quickCarried := make(chan struct{}, 1)
	kept := c.HandleHere(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"hi"}}}`), func() { quickCarried <- struct{}{} })
	if !kept {
		recv(t, quickCarried, "carry, after HandleHere reported false")
	} else if len(quickCarried) > 0 {
		t.Fatal("HandleHere reported true after calling carry: two goroutines would read")
	}
	select {
	case l := <-out:
		if !strings.Contains(l, `"id":1,"result"`) || !strings.Contains(l, `"hi"`) {
			t.Fatalf("echo's answer: %s", l)
		}
	default:
		t.Fatal("HandleHere returned before the quick request's answer was sent")
	}

	// A slow request: carry must run elsewhere and read its cancellation
	// (sent once the call has started: one read earlier would rightly
	// stop it before it starts).
	carried := make(chan struct{})
	cancelNow := make(chan struct{})
	slow := make(chan bool, 1)
	go func() {
		slow <- c.HandleHere(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_slow","arguments":{}}}`), func() {
			close(carried)
			<-cancelNow
			c.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`))
		})
	}()
	recv(t, fx.Started, "slow call started")
	recv(t, carried, "the reading loop carried to a worker")
	close(cancelNow)
	if err := recv(t, fx.Cancelled, "the slow call's cancellation"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the slow call's ctx: %v; want cancelled", err)
	}
	if recv(t, slow, "HandleHere's return") {
		t.Error("HandleHere after carrying the loop on: true; want false (reading went on elsewhere)")
	}

	// Beside a request in flight, HandleHere returns at once.
	go c.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_slow","arguments":{}}}`))
	recv(t, fx.Started, "slow call 3 started")
	noCarry := func() { t.Error("carry called for a request queued beside another") }
	if !c.HandleHere(ctx, []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"test_slow","arguments":{}}}`), noCarry) {
		t.Error("HandleHere beside a request in flight: false; want true")
	}
	recv(t, fx.Started, "slow call 4 started")
	close(fx.Release)
	got := map[string]bool{}
	for range 2 {
		l := recv(t, out, "a slow call's answer")
		got[l[strings.Index(l, `"id":`):strings.Index(l, `,"result"`)]] = true
	}
	if !got[`"id":3`] || !got[`"id":4`] {
		t.Errorf("answered %v; want ids 3 and 4", got)
	}
}

// feed is a transport's one reader, as stdio's: it serves each line
// with Conn.Handle while more are waiting, and with Conn.HandleHere when
// none is, carrying itself on when HandleHere says so.
type feed struct {
	c     *Conn
	lines chan string
}

func (f *feed) run() {
	for l := range f.lines {
		if len(f.lines) > 0 {
			f.c.Handle(context.Background(), []byte(l))
		} else if !f.c.HandleHere(context.Background(), []byte(l), f.run) {
			return
		}
	}
}

// A call run on the reader never keeps the reader from the next message:
// once the watchdog has ticked twice during it (ticks the test drives), a
// ping is answered and a cancellation honoured while the call still runs;
// and a call waiting for the client's answer to a request of ours gets it
// with no tick at all.
func TestReaderRunsCalls(t *testing.T) {
	const slow = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow","arguments":{}}}`
	for _, tc := range []struct {
		name string
		then func(t *testing.T, fx *fixture, c *Conn, in chan<- string, out chanOut, ticks *fakeTicks)
	}{
		{"ping while a slow call runs", func(t *testing.T, fx *fixture, _ *Conn, in chan<- string, out chanOut, ticks *fakeTicks) {
			in <- slow
			recv(t, fx.Started, "the slow call")
			ticks.tick(t, 3) // two handled: reading is carried on
			in <- `{"jsonrpc":"2.0","id":"p","method":"ping"}`
			if l := recv(t, out, "the ping's answer"); l != `{"jsonrpc":"2.0","id":"p","result":{}}` {
				t.Fatalf("got %s; want the ping's answer, before the slow call's", l)
			}
			close(fx.Release)
			if l := recv(t, out, "the slow call's answer"); !strings.Contains(l, `"id":1,"result"`) || !strings.Contains(l, "done") {
				t.Fatalf("got %s; want the slow call's answer", l)
			}
		}},
		{"cancelled while it runs", func(t *testing.T, fx *fixture, c *Conn, in chan<- string, out chanOut, ticks *fakeTicks) {
			in <- slow
			recv(t, fx.Started, "the slow call")
			ticks.tick(t, 3)
			in <- `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
			if err := recv(t, fx.Cancelled, "the cancellation"); !errors.Is(err, context.Canceled) {
				t.Fatalf("the slow call's ctx: %v; want cancelled", err)
			}
			idle := make(chan struct{})
			go func() { c.Wait(); close(idle) }()
			recv(t, idle, "the cancelled call's end")
			if len(out) > 0 {
				t.Fatalf("a cancelled call answered: %s", <-out)
			}
		}},
		{"the client's answer with no tick", func(t *testing.T, fx *fixture, _ *Conn, in chan<- string, out chanOut, _ *fakeTicks) {
			in <- `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_ask","arguments":{"method":"roots/list"}}}`
			ask := recv(t, out, "our roots/list request")
			if !strings.Contains(ask, `"method":"roots/list"`) {
				t.Fatalf("got %s; want roots/list", ask)
			}
			id := ask[strings.Index(ask, `"id":`)+5 : strings.Index(ask, `,"method"`)]
			in <- `{"jsonrpc":"2.0","id":` + id + `,"result":{"roots":[]}}`
			if err := recv(t, fx.PeerErr, "the tool's Request"); err != nil {
				t.Fatalf("Request: %v", err)
			}
			if l := recv(t, out, "the call's answer"); !strings.Contains(l, `"id":2,"result"`) || !strings.Contains(l, "roots") {
				t.Fatalf("got %s; want the call's answer with the roots", l)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture()
			srv := newServer(t, fx, Options{})
			out := make(chanOut, 16)
			c := srv.Connect(out, ConnInfo{ID: "t"})
			defer c.Close()
			defer func() { // a failed case must not leave Close waiting for a slow call
				select {
				case <-fx.Release:
				default:
					close(fx.Release)
				}
			}()
			ticks := newFakeTicks()
			c.s.workers.ticker = ticks.ticker // before any call: the watchdog starts after
			c.Handle(t.Context(), []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`))
			recv(t, out, "initialize's answer")
			c.Handle(t.Context(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			in := make(chan string, 4)
			go (&feed{c: c, lines: in}).run()
			defer close(in)
			tc.then(t, fx, c, in, out, ticks)
		})
	}
}
