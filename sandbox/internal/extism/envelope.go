package extism

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// The Extism kinds of Guest: JSON envelopes in, JSON out, over a
// byte-level Caller. A tool call's arguments and output can be megabytes,
// so each crosses with one scan at most: the arguments are spliced into
// the call_tool envelope as they are (encoding/json would compact them
// once for the request and again for the envelope), and the output is
// checked by one validating pass that finds the member it needs.

// V2 is a hyper-mcp v2 plugin: every question is an export taking
// {"request":…,"context":…}.
type V2 struct {
	// MaxOutput bounds the JSON the host writes for a result frame, as
	// the sandbox bounds a guest's output; 0 means no bound.
	MaxOutput int

	m      Caller
	plugin string
	frame  string // the frame export tool calls go to, "" for call_tool
	errs   Errors
}

// NewV2 returns the Guest of m, a v2 plugin called plugin (the name guests
// see in their context). Its tool calls go to abi.ExportCallToolMembers
// when m exports it, else to abi.ExportCallToolFrame when m exports that,
// else to call_tool. errs makes the errors of its caller's types.
func NewV2(m Caller, plugin string, errs Errors) *V2 {
	g := &V2{m: m, plugin: plugin, errs: errs}
	for _, e := range []string{abi.ExportCallToolMembers, abi.ExportCallToolFrame} {
		if m.HasExport(e) {
			g.frame = e
			break
		}
	}
	return g
}

func (g *V2) ABI() int { return 2 }

// Lists calls the list exports the plugin has, each with the context of a
// call that serves no client request.
func (g *V2) Lists(ctx context.Context) (*Lists, error) {
	input, err := json.Marshal(abi.Input{Context: fillContext(abi.Context{Plugin: g.plugin})})
	if err != nil {
		return nil, err
	}
	ls := &Lists{}
	for _, x := range []struct {
		export, member string
		to             *[]json.RawMessage
	}{
		{abi.ExportListTools, "tools", &ls.Tools},
		{abi.ExportListResources, "resources", &ls.Resources},
		{abi.ExportListResourceTemplates, "resourceTemplates", &ls.Templates},
		{abi.ExportListPrompts, "prompts", &ls.Prompts},
		{abi.ExportListSkills, "files", &ls.Skills},
	} {
		if !g.m.HasExport(x.export) {
			continue
		}
		if *x.to, err = listCall(ctx, g.m, x.export, input, x.member); err != nil {
			return nil, err
		}
	}
	return ls, nil
}

// CallTool sends call_tool {"request":{name,arguments},"context":cc},
// or, to a guest that exports a frame export (NewV2), the same call as an
// abi.CallFrame there. Either way its errors name call_tool, the
// question the plugin answered.
func (g *V2) CallTool(ctx context.Context, tool ToolRef, args json.RawMessage, cc abi.Context) (ToolResult, error) {
	if g.frame != "" {
		in, err := g.callFrameInput(tool.Name, args, cc)
		if err != nil {
			return ToolResult{}, err
		}
		r, err := g.callTool(ctx, g.frame, in)
		if err == nil {
			return r, nil
		}
		if oe := (*OutputError)(nil); errors.As(err, &oe) {
			oe.Export = abi.ExportCallTool
		} else {
			g.errs.Rename(err, g.frame, abi.ExportCallTool)
		}
		return r, err
	}
	in, err := g.callToolInput(tool.Name, args, cc)
	if err != nil {
		return ToolResult{}, err
	}
	return g.callTool(ctx, abi.ExportCallTool, in)
}

func (g *V2) ReadResource(ctx context.Context, uri string, cc abi.Context) (json.RawMessage, error) {
	in, err := g.envelope(abi.ReadResourceParams{URI: uri}, cc)
	if err != nil {
		return nil, err
	}
	return g.call(ctx, abi.ExportReadResource, in, "contents", '[')
}

func (g *V2) GetPrompt(ctx context.Context, name string, args map[string]string, cc abi.Context) (json.RawMessage, error) {
	in, err := g.envelope(abi.GetPromptParams{Name: name, Arguments: args}, cc)
	if err != nil {
		return nil, err
	}
	return g.call(ctx, abi.ExportGetPrompt, in, "messages", '[')
}

func (g *V2) Complete(ctx context.Context, params abi.CompleteParams, cc abi.Context) (json.RawMessage, error) {
	params.Ref.Type = strings.TrimPrefix(params.Ref.Type, "ref/")
	in, err := g.envelope(params, cc)
	if err != nil {
		return nil, err
	}
	return g.call(ctx, abi.ExportComplete, in, "completion", '{')
}

// RootsListChanged sends on_roots_list_changed {"context":{"_meta":{…}}}
// (a notification has no id, as hyper-mcp sends it) when the plugin
// exports it; its output is ignored.
func (g *V2) RootsListChanged(ctx context.Context, cc abi.Context) error {
	if !g.m.HasExport(abi.ExportOnRootsListChanged) {
		return nil
	}
	cc.ID = nil
	cc.Plugin = g.plugin
	if isNull(cc.Meta) {
		cc.Meta = emptyMeta
	}
	in, err := json.Marshal(abi.Input{Context: cc})
	if err != nil {
		return fmt.Errorf("plugin %q: encode input: %w", g.plugin, err)
	}
	_, err = g.m.Call(ctx, abi.ExportOnRootsListChanged, in)
	return err
}

// V1 is an mcp.run servlet: describe lists its tools, call calls
// one with {"params":{name,arguments}}. It answers the other questions as
// a v2 plugin would, when it has their exports.
type V1 struct{ *V2 }

// NewV1 returns the Guest of v2's module as an mcp.run servlet.
func NewV1(v2 *V2) *V1 { return &V1{v2} }

func (g *V1) ABI() int { return 1 }

func (g *V1) Lists(ctx context.Context) (*Lists, error) {
	tools, err := listCall(ctx, g.m, abi.ExportDescribe, nil, "tools")
	if err != nil {
		return nil, err
	}
	return &Lists{Tools: tools}, nil
}

func (g *V1) CallTool(ctx context.Context, tool ToolRef, args json.RawMessage, _ abi.Context) (ToolResult, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = nil
	}
	in, err := json.Marshal(abi.V1CallInput{Params: abi.CallToolParams{Name: tool.Name, Arguments: args}})
	if err != nil {
		return ToolResult{}, fmt.Errorf("plugin %q: tool %q: encode input: %w", g.plugin, tool.Name, err)
	}
	return g.callTool(ctx, abi.ExportCall, in)
}

// RootsListChanged does nothing: v1 has no notifications.
func (g *V1) RootsListChanged(context.Context, abi.Context) error { return nil }

// listCall calls a list export and returns the items of its member array.
// An absent or null member is an empty list.
func listCall(ctx context.Context, m Caller, export string, input []byte, member string) ([]json.RawMessage, error) {
	out, err := m.Call(ctx, export, input)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", export, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil || top == nil {
		return nil, fmt.Errorf("%s: output is not a JSON object: %s", export, snippet(out))
	}
	raw, ok := top[member]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: %q is not an array", export, member)
	}
	return items, nil
}

// call runs export and checks that its output is a JSON object whose
// member is an array ('[') or an object ('{').
func (g *V2) call(ctx context.Context, export string, in []byte, member string, kind byte) (json.RawMessage, error) {
	out, err := g.invoke(ctx, export, in)
	if err != nil {
		return nil, err
	}
	if msg := checkShape(out, member, kind); msg != "" {
		return nil, &OutputError{Plugin: g.plugin, Export: export, Msg: msg}
	}
	return out, nil
}

// callTool runs export, a tool call, and reads its output as a
// ToolResult.
func (g *V2) callTool(ctx context.Context, export string, in []byte) (ToolResult, error) {
	out, err := g.invoke(ctx, export, in)
	if err != nil {
		return ToolResult{}, err
	}
	if export == abi.ExportCallToolMembers && abi.IsResultFrame(out) {
		return g.resultFrame(out)
	}
	r, msg := ReadToolResult(out)
	if msg != "" {
		return ToolResult{}, &OutputError{Plugin: g.plugin, Export: export, Msg: msg}
	}
	return r, nil
}

// resultFrame writes the JSON of out, a result frame, no longer than the
// guest's own output may be.
func (g *V2) resultFrame(out []byte) (ToolResult, error) {
	js, isError, structured, err := abi.AppendResultJSON(make([]byte, 0, len(out)+64), out, g.MaxOutput)
	if err != nil {
		return ToolResult{}, &OutputError{Plugin: g.plugin, Export: abi.ExportCallToolMembers, Msg: err.Error()}
	}
	return ToolResult{JSON: js, IsError: isError, Structured: structured}, nil
}

// invoke runs export, which the plugin must have, with in. The frame
// export is known to be there (NewV2).
func (g *V2) invoke(ctx context.Context, export string, in []byte) ([]byte, error) {
	if export != g.frame && !g.m.HasExport(export) {
		return nil, g.errs.Unsupported(g.plugin, export)
	}
	return g.m.Call(ctx, export, in)
}

// envelope builds a v2 input: {"request":…,"context":…}, with the
// context's id and _meta always present (see [fillContext]).
func (g *V2) envelope(request any, cc abi.Context) ([]byte, error) {
	cc.Plugin = g.plugin
	in := abi.Input{Context: fillContext(cc)}
	req, err := json.Marshal(request)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", g.plugin, err)
	}
	in.Request = req
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", g.plugin, err)
	}
	return b, nil
}

// internalID is the context id of the v2 calls mcphost makes on its own,
// outside any client request: the lists read at load, after a reload and
// after a plugin signals a list change. hyper-mcp's guests deserialize
// context.id strictly as a number or a string, so it is never absent.
const internalID = `"mcphost/internal"`

var emptyMeta = json.RawMessage(`{}`)

// fillContext makes cc what hyper-mcp sends: "id" and "_meta" always
// present, "_meta" {} when the client sent none (guests built from
// hyper-mcp's Rust template refuse a context without it), and the id
// [internalID] for calls that serve no client request.
func fillContext(cc abi.Context) abi.Context {
	if isNull(cc.ID) {
		cc.ID = json.RawMessage(internalID)
	}
	if isNull(cc.Meta) {
		cc.Meta = emptyMeta
	}
	return cc
}

// isNull reports whether raw is empty or the JSON literal null (space
// around it allowed).
func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// callToolInput is the v2 call_tool envelope
// {"request":{"name":…,"arguments":…},"context":…}, built by appending.
// args must be valid JSON (the caller checked it) or empty.
func (g *V2) callToolInput(name string, args json.RawMessage, cc abi.Context) ([]byte, error) {
	cc.Plugin = g.plugin
	cc = fillContext(cc)
	in := make([]byte, 0, len(args)+len(name)+len(cc.ID)+len(cc.Meta)+len(cc.ProtocolVersion)+len(cc.Plugin)+96)
	in = append(in, `{"request":{"name":`...)
	in = jsonscan.AppendString(in, name)
	if len(bytes.TrimSpace(args)) > 0 {
		in = append(in, `,"arguments":`...)
		in = append(in, args...)
	}
	in = append(in, `},"context":`...)
	in, err := appendContext(in, cc)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", g.plugin, err)
	}
	return append(in, '}'), nil
}

// callFrameInput is the abi.CallFrame of a tool call in the layout of
// g.frame: the context's members as callToolInput would write them
// (filled, compacted), args as they are and, for
// abi.ExportCallToolMembers, the index of args' members; args must be
// valid JSON (the caller checked it) or empty.
func (g *V2) callFrameInput(name string, args json.RawMessage, cc abi.Context) ([]byte, error) {
	cc.Plugin = g.plugin
	cc = fillContext(cc)
	id, err := compact(cc.ID)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", g.plugin, err)
	}
	meta, err := compact(cc.Meta)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", g.plugin, err)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = nil
	}
	f := abi.CallFrame{Name: []byte(name), ID: id, Meta: meta,
		ProtocolVersion: []byte(cc.ProtocolVersion), Plugin: []byte(cc.Plugin), Arguments: args}
	if g.frame == abi.ExportCallToolFrame {
		return abi.AppendCallFrame(make([]byte, 0, f.Size()), &f), nil
	}
	var index [4 + 8*17]byte // eight members' room, on the stack
	f.Members = abi.AppendArgMembers(index[:0], args)
	return abi.AppendMembersFrame(make([]byte, 0, f.Size()), &f), nil
}

// appendContext appends cc as json.Marshal writes it (strings apart:
// HTML characters are not escaped), without its reflection (~1.3 µs a
// call).
func appendContext(b []byte, cc abi.Context) ([]byte, error) {
	b = append(b, '{')
	sep := false
	member := func(key string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, key...)
	}
	for _, raw := range []struct {
		key string
		v   json.RawMessage
	}{{`"id":`, cc.ID}, {`"_meta":`, cc.Meta}} {
		if len(raw.v) == 0 {
			continue
		}
		member(raw.key)
		var err error
		if b, err = appendCompact(b, raw.v); err != nil {
			return nil, err
		}
	}
	if cc.ProtocolVersion != "" {
		member(`"protocolVersion":`)
		b = jsonscan.AppendString(b, cc.ProtocolVersion)
	}
	if cc.Plugin != "" {
		member(`"plugin":`)
		b = jsonscan.AppendString(b, cc.Plugin)
	}
	return append(b, '}'), nil
}

// appendCompact appends raw JSON as json.Marshal writes a RawMessage:
// checked, compacted and HTML-escaped. Raw JSON without space or any byte
// it would escape is only checked; other JSON goes through encoding/json.
func appendCompact(b, raw []byte) ([]byte, error) {
	q, err := compact(raw)
	if err != nil {
		return nil, err
	}
	return append(b, q...), nil
}

// compact returns raw JSON as json.Marshal writes a RawMessage: raw
// itself when it has no space or byte that would change (then only
// checked), else encoding/json's compacted copy.
func compact(raw []byte) ([]byte, error) {
	if !needsMarshal(raw) {
		if !jsonscan.Valid(raw) {
			return nil, fmt.Errorf("invalid JSON %.40q", raw)
		}
		return raw, nil
	}
	return json.Marshal(json.RawMessage(raw))
}

// needsMarshal reports whether raw has a byte json.Marshal would change:
// space, an HTML character, or the lead byte of U+2028 and U+2029.
func needsMarshal(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xe2:
			return true
		}
	}
	return false
}
