package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
)

// parseCallParams reads tools/call params without reflection and without
// walking them again: the codec read their members with the message, so
// the arguments are not scanned here at all. This is the hot path.
func parseCallParams(req *request) (name string, args, meta json.RawMessage, err error) {
	if len(req.params) == 0 || req.params[0] != '{' {
		return "", nil, nil, jsonrpc.InvalidParams("invalid params: tools/call needs an object with a name")
	}
	rawName, args, meta := req.param("name"), req.param("arguments"), req.param("_meta")
	name, ok := jsonrpc.Unquote(rawName)
	switch {
	case rawName == nil:
		return "", nil, nil, jsonrpc.InvalidParams("invalid params: missing tool name")
	case !ok:
		return "", nil, nil, jsonrpc.InvalidParams("invalid params: tool name must be a string")
	case string(args) == "null":
		args = nil
	case args != nil && args[0] != '{':
		return "", nil, nil, jsonrpc.InvalidParams("invalid params: arguments must be an object")
	}
	if meta != nil && meta[0] != '{' {
		return "", nil, nil, jsonrpc.InvalidParams("invalid params: _meta must be an object")
	}
	return name, args, meta, nil
}

// callTool runs a tool. Everything that goes wrong inside the tool —
// arguments that fail its schema, a trap, a timeout, running out of memory,
// a guest error, bad output, structuredContent that fails its outputSchema —
// is a tool execution error: an isError result the model can read, never a
// protocol error. Only an unknown tool or malformed params are -32602.
func callTool(ctx context.Context, s *session, req *request) (any, error) {
	name, args, meta, err := parseCallParams(req)
	if err != nil {
		return nil, err
	}
	sc, release, err := s.scope(ctx, req, func(sc scope) bool { return sc.tool(name) != nil })
	defer release()
	if err != nil {
		return nil, err
	}
	t := sc.tool(name)
	if t == nil {
		sc.logHidden(s, name)
		return nil, jsonrpc.InvalidParams("unknown tool: %s%s", name, sc.didYouMean("tool", name))
	}
	if !CallerOf(ctx).may(t.Name) {
		return nil, forbidden("tool", t.Name)
	}
	req.served = t.Plugin
	cc := abi.Context{ID: req.id, Meta: meta, ProtocolVersion: req.version().String()}
	if task, err := wantsTask(req, t); err != nil {
		return nil, err
	} else if task {
		return callTask(ctx, s, req, t, args, cc)
	}
	out, err := t.Run(ctx, req.peer(), args, cc)
	if s.srv.opts.Tracer != nil {
		spanOutcome(ctx, t.Plugin.Name, err)
	}
	return toolOutcome(s, t, out, err, req.version())
}

// wantsTask reports whether a call of t, requested by req, runs as a task,
// or returns the -32021 of a required-task tool whose client cannot take
// one.
func wantsTask(req *request, t *plugins.Tool) (bool, error) {
	support := t.TaskSupport()
	if req.state == nil || support == abi.TaskForbidden {
		return false, nil
	}
	if !req.state.caps.tasks {
		if support == abi.TaskRequired {
			return false, missingTasks("tool " + strconv.Quote(t.Name) + " runs only as a task")
		}
		return false, nil
	}
	return true, nil
}

// toolOutcome is what a tools/call answers for a run's output and error.
// Everything that goes wrong inside the tool is a tool execution error:
// an isError result the model can read, never a protocol error.
func toolOutcome(s *session, t *plugins.Tool, out json.RawMessage, err error, v protocol.Version) (any, error) {
	if err == nil {
		return json.RawMessage(protocol.FilterCallResult(out, v)), nil
	}
	var ve *plugins.ValidationError
	switch {
	case errors.As(err, &ve) && ve.What == "arguments":
		return toolError(fmt.Sprintf("invalid arguments for tool %q: %s", t.Name, ve.Detail)), nil
	case errors.As(err, &ve):
		return toolError(fmt.Sprintf("plugin %q tool %q: structuredContent does not match the tool's outputSchema: %s",
			t.Plugin.Name, t.Original, ve.Detail)), nil
	}
	return toolError(s.failure("tool", t.Plugin.Name, t.Original, err)), nil
}

// logHidden logs, for a call of an unknown tool name, the filter that hid
// it (read_only, include_tools, exclude_tools), if one did: the client
// only hears "unknown tool", the operator learns why.
func (sc scope) logHidden(s *session, name string) {
	if sc.g == nil {
		return
	}
	p, h := sc.g.Hidden(name)
	if sc.p != nil {
		p, h = sc.p, sc.p.HiddenTool(name, true)
	}
	if h != nil && sc.owns(p) {
		s.log.Info("tool call refused: a filter hides the tool", "tool", name, "plugin", p.Name, "filter", h.Filter)
	}
}

// toolError is an isError CallToolResult carrying text.
func toolError(text string) json.RawMessage {
	b := append(make([]byte, 0, len(text)+64), `{"content":[{"type":"text","text":`...)
	b = jsonscan.AppendString(b, text)
	return append(b, `}],"isError":true}`...)
}

// failure describes a failed plugin call for the client and logs it on
// stderr too, so no fault is silent.
func (s *session) failure(kind, plugin, item string, err error) string {
	msg := describeFailure(kind, plugin, item, err)
	s.log.Warn("plugin call failed", "plugin", plugin, "item", item, "err", err)
	return msg
}

// describeFailure names the plugin, the item and the cause of a failed
// plugin call: `plugin "faulty" tool "loop": timeout: …`.
func describeFailure(kind, plugin, item string, err error) string {
	return fmt.Sprintf("plugin %q %s %q: %s", plugin, kind, item, plugins.Describe(err))
}

// pluginError turns a failed resources/read, prompts/get or
// completion/complete into a JSON-RPC error: -32001 when the plugin ran
// out of time, -32603 otherwise.
func (s *session) pluginError(kind, plugin, item string, err error) error {
	code := jsonrpc.CodeInternal
	if errors.Is(err, plugins.ErrTimeout) {
		code = codeTimeout
	}
	return &jsonrpc.Error{Code: code, Message: s.failure(kind, plugin, item, err)}
}
