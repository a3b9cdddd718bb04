package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/plugins"
)

// The tasks extension's seam. Package tasks (host/internal/tasks) runs the
// tasks and keeps their records; this file reads tasks/* requests, says
// who owns a task, and lends a task-capable call what only a request has:
// the tool's run, its input_required round and its notifications. Which
// calls are tasks is tools.go's wantsTask.

// taskOwner is who a task created by a request of s belongs to: the
// caller's identity on HTTP (ConnInfo.Principal: with [auth] the token's
// issuer and subject, so a refreshed token still reaches its tasks; see
// streamable's principal.go), the connection otherwise (stdio, in
// process).
func (s *session) taskOwner() string {
	if s.stateless {
		return "http:" + s.principal
	}
	return "conn:" + s.id
}

func missingTasks(why string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeMissingCapability, Message: "Missing required client capability: " + tasks.Extension + " (" + why + ")",
		Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasks.Extension: struct{}{}}}}}
}

// callTask runs a call of t that may become a task in the generation
// the request looked t up in, and answers the request.
func callTask(ctx context.Context, s *session, req *request, t *plugins.Tool, args json.RawMessage, cc abi.Context) (any, error) {
	g, release := s.srv.reg.Acquire()
	if g == nil || g.Tool(t.Name) != t {
		// The tool was reloaded since the request looked it up.
		release()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternal, "tool %q was reloaded while starting; retry", t.Name)
	}
	return s.srv.tasks.Run(ctx, &taskCall{s: s, req: req, t: t, args: args, cc: cc}, release)
}

// taskCall is the tasks.Call of a task-capable tools/call.
type taskCall struct {
	s    *session
	req  *request
	t    *plugins.Tool
	args json.RawMessage
	cc   abi.Context
}

var _ tasks.Call = (*taskCall)(nil)

func (c *taskCall) Owner() string                         { return c.s.taskOwner() }
func (c *taskCall) Tool() (string, string)                { return c.t.Name, c.t.Plugin.Name }
func (c *taskCall) Responses() map[string]json.RawMessage { return c.req.input.responses }

func (c *taskCall) NotifyRequest(ctx context.Context, method string, params json.RawMessage) error {
	return c.req.peer().Notify(ctx, method, params)
}

func (c *taskCall) NotifyListeners(method string, params json.RawMessage) {
	c.req.sess.srv.notifyListeners(method, params)
}

// Attempt runs the tool once, its input requests answered from responses
// or recorded in a round of their own.
func (c *taskCall) Attempt(ctx context.Context, n *tasks.Notifier, responses map[string]json.RawMessage) tasks.Attempt {
	if jsonrpc.Member(c.cc.Meta, "progressToken") == nil {
		// The guest reports progress only with a token; a task's progress
		// becomes its statusMessage.
		c.cc.Meta = jsonrpc.SetMember(c.cc.Meta, "progressToken", jsonscan.AppendString(nil, "task-"+n.ID()))
	}
	in := &inputRound{target: c.req.input.target, responses: responses,
		asked: map[string]json.RawMessage{}, counts: map[string]int{}, missing: map[string]bool{}}
	out, err := c.t.Run(ctx, &taskPeer{n: n, req: c.req, in: in}, c.args, c.cc)
	res, rerr := toolOutcome(c.s, c.t, out, err, c.req.version())
	return &taskAttempt{req: c.req, in: in, res: res, err: rerr}
}

// taskAttempt is one run of a task-capable call and its input round.
type taskAttempt struct {
	req *request
	in  *inputRound
	res any
	err error
}

func (a *taskAttempt) Outcome() (any, error)             { return a.res, a.err }
func (a *taskAttempt) Asked() map[string]json.RawMessage { return a.in.asked }

// Keep moves the round's questions to the request's, whose answer
// (invoke) may then be input_required.
func (a *taskAttempt) Keep() {
	a.req.input.mu.Lock()
	for k, v := range a.in.asked {
		a.req.input.asked[k] = v
	}
	for k := range a.in.missing {
		a.req.input.missing[k] = true
	}
	a.req.input.mu.Unlock()
}

func (a *taskAttempt) Final() (any, error) {
	if merr := a.in.missingCapability(a.res, a.err); merr != nil {
		return nil, merr
	}
	return a.res, a.err
}

// taskPeer is the plugins.Peer of a task-capable call: its notifications
// go through package tasks, its input requests to the attempt's round.
type taskPeer struct {
	n   *tasks.Notifier
	req *request
	in  *inputRound
}

func (p *taskPeer) Notify(ctx context.Context, method string, params json.RawMessage) error {
	return p.n.Notify(ctx, method, params)
}

// Request answers the call's input requests from the responses known so
// far, or records them: in its request they become input_required
// rounds, in a task its inputRequests.
func (p *taskPeer) Request(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if params != nil && !jsonscan.Valid(params) {
		return nil, fmt.Errorf("%s: params are not valid JSON", method)
	}
	if err := mayRequest(p.req.clientState(), method, params); err != nil {
		if errors.Is(err, ErrNotSupported) {
			p.in.refused(method)
		}
		return nil, err
	}
	return p.in.ask(method, params)
}

// taskParams reads the taskId of a tasks/* request, after checking the
// client declared the extension.
func taskParams(req *request) (string, error) {
	if req.state == nil || !req.state.caps.tasks {
		return "", missingTasks(req.method + " needs it")
	}
	id, ok := jsonrpc.Unquote(req.param("taskId"))
	if !ok || id == "" {
		return "", jsonrpc.InvalidParams("invalid params: taskId must be a non-empty string")
	}
	return id, nil
}

// getTask serves tasks/get, from the store: any replica answers.
func getTask(ctx context.Context, s *session, req *request) (any, error) {
	id, err := taskParams(req)
	if err != nil {
		return nil, err
	}
	task, plugin, err := s.srv.tasks.Get(ctx, s.taskOwner(), id)
	if err != nil {
		return nil, err
	}
	if g, release := s.srv.reg.Acquire(); g != nil {
		req.served = g.Plugin(plugin)
		release()
	}
	return task, nil
}

// updateTask serves tasks/update: answers to outstanding inputRequests are
// stored, others ignored (tasks.Store.Update).
func updateTask(ctx context.Context, s *session, req *request) (any, error) {
	raw := req.param("inputResponses")
	if raw != nil && !jsonrpc.IsObject(raw) {
		return nil, jsonrpc.InvalidParams("invalid params: inputResponses must be an object")
	}
	id, err := taskParams(req)
	if err != nil {
		return nil, err
	}
	if err := s.srv.tasks.Update(ctx, s.taskOwner(), id, raw); err != nil {
		return nil, err
	}
	return emptyJSON, nil
}

// cancelTask serves tasks/cancel: the task's call stops wherever it runs
// (tasks.Store.Cancel).
func cancelTask(ctx context.Context, s *session, req *request) (any, error) {
	id, err := taskParams(req)
	if err != nil {
		return nil, err
	}
	if err := s.srv.tasks.Cancel(ctx, s.taskOwner(), id); err != nil {
		return nil, err
	}
	return emptyJSON, nil
}
