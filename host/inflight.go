package host

import (
	"context"
	"encoding/json"
	"runtime/debug"

	"github.com/mcphost/mcphost/host/jsonrpc"
)

// start serves req concurrently, so that a slow plugin never delays the
// caller (the transport's reader, which must go on reading cancellations
// and the client's answers to our requests): it tracks req, then puts it
// on the session's queue, which an idle worker takes it from, or a new
// worker when none is idle.
func (s *session) start(ctx context.Context, m *method, req *request, b *batch, slot int) {
	ctx, req.cancel = context.WithCancel(ctx)
	if err := s.track(req); err != nil {
		req.cancel()
		s.reply(req.id, nil, err, b, slot)
		return
	}
	s.wg.Add(1)
	if b != nil {
		b.wg.Add(1)
	}
	t := task{ctx: ctx, m: m, req: req, b: b, slot: slot}
	select {
	case s.work <- t:
	default:
		go s.worker(t)
	}
}

// task is one request for a worker.
type task struct {
	ctx  context.Context
	m    *method
	req  *request
	b    *batch
	slot int
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
		s.run(t)
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

// run serves one concurrent request and answers it unless it was cancelled.
func (s *session) run(t task) {
	defer s.wg.Done()
	req := t.req
	res, err := s.invoke(t.ctx, t.m, req)
	cancelled := s.untrack(req) || t.ctx.Err() != nil
	req.cancel()
	if !cancelled {
		s.reply(req.id, res, err, t.b, t.slot)
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

// track registers an in-flight request so notifications/cancelled can find it.
func (s *session) track(req *request) error {
	key := string(req.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.inflight[key]; dup {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", req.id)
	}
	s.inflight[key] = req
	return nil
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
