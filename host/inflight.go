package host

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/jsonrpc"
)

// This file is the one way a concurrent request (tools/call, …) runs.
// start tracks it and returns it as a task; the caller runs it, with
// s.run, in one of two places:
//   - on the session's workers (queue): Handle, batches and Streamable
//     HTTP, where the caller must not wait for a tool;
//   - on the calling goroutine (runHere): a transport's one reader with
//     nothing more to read (stdio, Conn.HandleHere). The answer then
//     waits for no goroutine to be woken: waking one costs a futex call,
//     and across cores an interrupt, which was 9–15% of a serial stdio
//     tools/call on 2 cores. If the request is still running after
//     handoffAfter, a watchdog queues the reader's own loop (carry) to a
//     worker, so that the next message, a cancellation or the client's
//     answer to our own request, is read all the same.
// Workers are goroutines the session keeps for both: a task, or a
// carried reading loop.

// start tracks req, so that a cancellation handled after it finds it,
// and returns it as a task to be run; a request whose id is in use is
// answered at once instead.
func (s *session) start(ctx context.Context, m *method, req *request, b *batch, slot int) (task, bool) {
	ctx, req.cancel = context.WithCancel(ctx)
	alone, err := s.track(req)
	if err != nil {
		req.cancel()
		s.reply(req.id, nil, err, b, slot)
		return task{}, false
	}
	s.wg.Add(1)
	if b != nil {
		b.wg.Add(1)
	}
	return task{ctx: ctx, m: m, req: req, b: b, slot: slot, alone: alone}, true
}

// queue hands t to an idle worker, or to a new one when none is idle.
func (s *session) queue(t task) {
	select {
	case s.work <- t:
	default:
		go s.worker(t)
	}
}

// task is one request for a worker, or a reading loop to carry on.
type task struct {
	ctx   context.Context
	m     *method
	req   *request
	b     *batch
	slot  int
	carry func() // when set, the task is this, not a request
	alone bool   // no other request was in flight when it started
}

// maxIdleWorkers bounds the workers kept waiting for the next request.
const maxIdleWorkers = 16

// worker serves tasks. Instead of exiting after one request it waits for
// the next, because a fresh goroutine grows its stack again for every call
// (plugin calls go deep: JSON, schema validation), which cost ~12% of a
// tools/call round trip. Workers are owned by the session: beyond
// maxIdleWorkers they exit when idle, and all exit when the session closes.
func (s *session) worker(t task) {
	for {
		if t.carry != nil {
			t.carry()
		} else {
			s.run(t)
		}
		if s.idle.Add(1) > maxIdleWorkers {
			s.idle.Add(-1)
			return
		}
		select {
		case t = <-s.work:
			s.idle.Add(-1)
		case <-s.quit:
			return
		}
	}
}

// handoffAfter is how long a request runs on the reading goroutine before
// the watchdog passes reading on. Go's timers fire late when every P is
// idle (the netpoller sleeps in whole milliseconds: a 100 µs timer fired
// after 1.1 ms at the median on 2 cores), so that is the real bound on how
// long a slow request delays the next message.
const handoffAfter = 20 * time.Microsecond

// runHere runs t on the calling goroutine, a transport's reader, and
// reports whether the caller keeps reading: false means the watchdog
// passed carry to a worker meanwhile, where reading now goes on, and the
// caller must return without reading. A request that starts while others
// are in flight goes to a worker instead: under concurrent load the
// next request is likely on its way, and it must not wait for this one.
func (s *session) runHere(t task, carry func()) bool {
	if !t.alone {
		s.queue(t)
		// The caller is about to block in read(2), which keeps this P:
		// let the worker just woken run on it first.
		runtime.Gosched()
		return true
	}
	h := s.spare.Swap(nil)
	if h == nil {
		h = &handoff{s: s}
		h.t = time.AfterFunc(time.Hour, h.fire)
		h.t.Stop()
	}
	h.carry = carry
	h.state.Store(handoffArmed)
	h.t.Reset(handoffAfter)
	s.run(t)
	if !h.state.CompareAndSwap(handoffArmed, handoffIdle) {
		return false // fire has h now; it is not reused
	}
	h.t.Stop()
	s.spare.Store(h)
	return true
}

// handoff is runHere's watchdog. Each reader takes the session's spare
// one, so its timer is made once and re-armed for every request.
type handoff struct {
	s     *session
	t     *time.Timer
	carry func()
	state atomic.Int32 // handoffIdle, handoffArmed or handoffFired
}

const (
	handoffIdle = iota
	handoffArmed
	handoffFired
)

// fire passes reading on when the request is still running. A late
// firing of an earlier arming passes it on early, which is always safe:
// the carried loop is the same one.
func (h *handoff) fire() {
	if h.state.CompareAndSwap(handoffArmed, handoffFired) {
		h.s.queue(task{carry: h.carry})
	}
}

// run serves one concurrent request and answers it unless it was cancelled.
func (s *session) run(t task) {
	defer s.wg.Done()
	req := t.req
	res, err := s.invoke(t.ctx, t.m, req)
	cancelled := s.untrack(req) || t.ctx.Err() != nil
	req.cancel()
	if !cancelled {
		s.answer(req, res, err, t.b, t.slot)
	} else if t.b == nil {
		s.unanswered(req.id)
	}
	if t.b != nil {
		t.b.wg.Done()
	}
}

// invoke runs a handler; a panic becomes -32603 and the session goes on.
func (s *session) invoke(ctx context.Context, m *method, req *request) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panicked", "method", req.method, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, jsonrpc.Errorf(jsonrpc.CodeInternal, "internal error while serving %s", req.method)
		}
	}()
	if req.state == nil {
		return m.fn(ctx, s, req)
	}
	if m.input {
		if req.input, err = s.srv.newInputRound(req); err != nil {
			return nil, err
		}
	}
	res, err = m.fn(ctx, s, req)
	if req.input != nil {
		// A plugin that asked for input may have failed for want of it;
		// the round it asked for supersedes its result or error.
		if len(req.input.asked) > 0 {
			res, err = s.srv.inputRequired(req), nil
		} else if merr := req.input.missingCapability(res, err); merr != nil {
			return nil, merr
		}
	}
	if err != nil {
		return nil, s.srv.statelessError(err)
	}
	body, err := jsonrpc.MarshalResult(res)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(s.srv.decorate(body, m, req.hints)), nil
}

// track registers an in-flight request so notifications/cancelled can
// find it, and reports whether it is the only one.
func (s *session) track(req *request) (alone bool, err error) {
	key := string(req.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.inflight[key]; dup {
		return false, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", req.id)
	}
	s.inflight[key] = req
	return len(s.inflight) == 1, nil
}

// untrack removes req and reports whether the client cancelled it.
func (s *session) untrack(req *request) bool {
	s.mu.Lock()
	delete(s.inflight, string(req.id))
	cancelled := req.cancelled
	s.mu.Unlock()
	req.done.Store(true)
	return cancelled
}

// cancelRequest handles notifications/cancelled: the request's context is
// cancelled (stopping its plugin call) and it will get no response.
// Unknown or finished ids are ignored, as the spec allows.
func (s *session) cancelRequest(id json.RawMessage, reason string) {
	s.mu.Lock()
	req := s.inflight[string(id)]
	if req != nil {
		req.cancelled = true
	}
	s.mu.Unlock()
	if req != nil {
		s.log.Debug("request cancelled", "id", string(id), "method", req.method, "reason", reason)
		req.cancel()
	}
}
