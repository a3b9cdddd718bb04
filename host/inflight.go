package host

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// This file is the one way a concurrent request (tools/call, …) runs.
// start tracks it and returns it as a task; the caller runs it, with
// s.run, in one of three places:
//   - on the goroutine of a transport that has one per request and waits
//     for the answer anyway (Conn.Start and Job.Run: a Streamable HTTP
//     POST), which sees to what must be written meanwhile;
//   - on the pool's workers (queue): Handle, batches, and Streamable
//     HTTP streams that PollAfter may close before the answer;
//   - on the calling goroutine (runHere): a transport's one reader with
//     nothing more to read (stdio, Conn.HandleHere), when no other request
//     is in flight. The answer then waits for no goroutine to be woken:
//     waking one costs a futex call, and across cores an interrupt, which
//     was 9–15% of a serial stdio tools/call on 2 cores. If the request
//     runs on, the pool's watchdog carries the reader's own loop on to a
//     worker, so that the next message, a cancellation or the client's
//     answer to our own request, is read all the same.

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

// task is one concurrent request to run.
type task struct {
	ctx   context.Context
	m     *method
	req   *request
	b     *batch
	slot  int
	alone bool // no other request was in flight when it started
}

// runHere runs t on the calling goroutine, a transport's reader, and
// reports whether the caller keeps reading: false means the watchdog
// passed carry to a worker meanwhile, where reading now goes on, and the
// caller must return without reading (see pool.here). A request that
// starts while others are in flight goes to a worker instead: under
// concurrent load the next request is likely on its way, and it must not
// wait for this one.
func (s *session) runHere(t task, carry func()) bool {
	if !t.alone {
		s.workers.queue(t)
		// The caller is about to block in read(2), which keeps this P:
		// let the worker just woken run on it first.
		runtime.Gosched()
		return true
	}
	return s.workers.here(t, carry)
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
