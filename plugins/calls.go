package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/sandbox"
)

// ErrNotSupported is matched (errors.Is) by the error of a call the plugin
// cannot serve because it lacks the export (for example get_prompt on a v1
// plugin). Such errors also match sandbox.ErrMissingExport.
var ErrNotSupported = errors.New("not supported")

// ErrNotFound is matched by the error of a call naming a tool or prompt the
// plugin does not expose (also one left out by include_tools or
// exclude_tools).
var ErrNotFound = errors.New("not found")

// UnsupportedError says a plugin lacks the export a call needs.
type UnsupportedError struct {
	Plugin, Export string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("plugin %q does not export %q", e.Plugin, e.Export)
}

// Is makes errors.Is match [ErrNotSupported] and sandbox.ErrMissingExport.
func (e *UnsupportedError) Is(target error) bool {
	return target == ErrNotSupported || target == sandbox.ErrMissingExport
}

// OutputError says a plugin's output is not valid JSON or not of the shape
// its export promises.
type OutputError struct {
	Plugin, Export, Msg string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("plugin %q: %s: bad output: %s", e.Plugin, e.Export, e.Msg)
}

// CallTool calls the plugin's tool by its own name (Tool.Original). v2
// plugins get call_tool with {"request":{name,arguments},"context":cc};
// v1 plugins get call with {"params":{name,arguments}}. The result is the
// guest's CallToolResult, checked to be an object with a "content" array.
// A guest failure (trap, timeout, …) comes back as the module's error
// (*sandbox.CallError for Wasm). cc.Plugin is set to the plugin's name.
func (p *Plugin) CallTool(ctx context.Context, original string, args json.RawMessage, cc abi.Context) (json.RawMessage, error) {
	if p.tools[original] == nil {
		return nil, fmt.Errorf("plugin %q: tool %q: %w", p.Name, original, ErrNotFound)
	}
	params := abi.CallToolParams{Name: original, Arguments: nonEmpty(args)}
	if p.ABI == 1 {
		in, err := json.Marshal(abi.V1CallInput{Params: params})
		if err != nil {
			return nil, fmt.Errorf("plugin %q: tool %q: encode input: %w", p.Name, original, err)
		}
		return p.call(ctx, abi.ExportCall, in, "content", '[')
	}
	return p.callTool(ctx, original, params.Arguments, cc, false)
}

// ReadResource calls read_resource for uri; the result must have a
// "contents" array.
func (p *Plugin) ReadResource(ctx context.Context, uri string, cc abi.Context) (json.RawMessage, error) {
	in, err := p.envelope(abi.ReadResourceParams{URI: uri}, cc)
	if err != nil {
		return nil, err
	}
	return p.call(ctx, abi.ExportReadResource, in, "contents", '[')
}

// GetPrompt calls get_prompt for the plugin's own prompt name
// (Prompt.Def.Name); the result must have a "messages" array.
func (p *Plugin) GetPrompt(ctx context.Context, name string, args map[string]string, cc abi.Context) (json.RawMessage, error) {
	if p.prompts[name] == nil {
		return nil, fmt.Errorf("plugin %q: prompt %q: %w", p.Name, name, ErrNotFound)
	}
	in, err := p.envelope(abi.GetPromptParams{Name: name, Arguments: args}, cc)
	if err != nil {
		return nil, err
	}
	return p.call(ctx, abi.ExportGetPrompt, in, "messages", '[')
}

// Complete calls complete. The "ref/" prefix of params.Ref.Type is
// stripped, as hyper-mcp does, so guests see "prompt" or "resource"; a
// prompt reference should carry the plugin's own prompt name. The result
// must have a "completion" object.
func (p *Plugin) Complete(ctx context.Context, params abi.CompleteParams, cc abi.Context) (json.RawMessage, error) {
	params.Ref.Type = strings.TrimPrefix(params.Ref.Type, "ref/")
	in, err := p.envelope(params, cc)
	if err != nil {
		return nil, err
	}
	return p.call(ctx, abi.ExportComplete, in, "completion", '{')
}

// RootsListChanged tells the plugin the client's roots changed, when it
// exports on_roots_list_changed; otherwise it does nothing. Its output is
// ignored.
func (p *Plugin) RootsListChanged(ctx context.Context, cc abi.Context) error {
	if p.ABI != 2 || !p.core.module.HasExport(abi.ExportOnRootsListChanged) {
		return nil
	}
	// A notification has no id: hyper-mcp sends {"context":{"_meta":{…}}}.
	cc.ID = nil
	in, err := p.notifyEnvelope(cc)
	if err != nil {
		return err
	}
	_, err = p.core.call(ctx, abi.ExportOnRootsListChanged, in)
	return err
}

// Call calls the tool on its plugin (see [Plugin.CallTool]).
func (t *Tool) Call(ctx context.Context, args json.RawMessage, cc abi.Context) (json.RawMessage, error) {
	return t.Plugin.CallTool(ctx, t.Original, args, cc)
}

// Get gets the prompt from its plugin (see [Plugin.GetPrompt]).
func (pr *Prompt) Get(ctx context.Context, args map[string]string, cc abi.Context) (json.RawMessage, error) {
	return pr.Plugin.GetPrompt(ctx, pr.Def.Name, args, cc)
}

func nonEmpty(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return b
}

// envelope builds a v2 input: {"request":…,"context":…}, with the
// context's id and _meta always present (see [fillContext]).
func (p *Plugin) envelope(request any, cc abi.Context) ([]byte, error) {
	cc.Plugin = p.Name
	in := abi.Input{Context: fillContext(cc)}
	if request != nil {
		req, err := json.Marshal(request)
		if err != nil {
			return nil, fmt.Errorf("plugin %q: encode input: %w", p.Name, err)
		}
		in.Request = req
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", p.Name, err)
	}
	return b, nil
}

// notifyEnvelope builds the input of a notification export:
// {"context":{"_meta":{…}}}, without an id.
func (p *Plugin) notifyEnvelope(cc abi.Context) ([]byte, error) {
	cc.Plugin = p.Name
	if len(bytes.TrimSpace(cc.Meta)) == 0 || bytes.Equal(bytes.TrimSpace(cc.Meta), []byte("null")) {
		cc.Meta = emptyMeta
	}
	b, err := json.Marshal(abi.Input{Context: cc})
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", p.Name, err)
	}
	return b, nil
}

// InternalID is the context id of the v2 calls mcphost makes on its own,
// outside any client request: the lists read at load, after a reload and
// after a plugin signals a list change. hyper-mcp's guests deserialize
// context.id strictly as a number or a string, so it is never absent.
const InternalID = `"mcphost/internal"`

var emptyMeta = json.RawMessage(`{}`)

// fillContext makes cc what hyper-mcp sends: "id" and "_meta" always
// present, "_meta" {} when the client sent none (guests built from
// hyper-mcp's Rust template refuse a context without it), and the id
// [InternalID] for calls that serve no client request.
func fillContext(cc abi.Context) abi.Context {
	if id := bytes.TrimSpace(cc.ID); len(id) == 0 || bytes.Equal(id, []byte("null")) {
		cc.ID = json.RawMessage(InternalID)
	}
	if m := bytes.TrimSpace(cc.Meta); len(m) == 0 || bytes.Equal(m, []byte("null")) {
		cc.Meta = emptyMeta
	}
	return cc
}

// call runs export and checks that its output is a JSON object whose
// member is an array ('[') or an object ('{').
func (p *Plugin) call(ctx context.Context, export string, in []byte, member string, kind byte) (json.RawMessage, error) {
	m := p.core.module
	if !m.HasExport(export) {
		return nil, &UnsupportedError{Plugin: p.Name, Export: export}
	}
	out, err := p.core.call(ctx, export, in)
	if err != nil {
		return nil, err
	}
	if msg := checkShape(out, member, kind); msg != "" {
		return nil, &OutputError{Plugin: p.Name, Export: export, Msg: msg}
	}
	return out, nil
}

// checkShape returns "" when out is one JSON object with member of the
// given kind, and what is wrong otherwise.
func checkShape(out []byte, member string, kind byte) string {
	v, ok, isObject := topMember(out, member)
	if !isObject {
		if !jsonscan.Valid(out) {
			return "invalid JSON: " + snippet(out)
		}
		if isNull(out) {
			return "not a JSON object: null"
		}
		return "not a JSON object: " + snippet(out)
	}
	if !ok {
		return fmt.Sprintf("missing %q", member)
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != kind {
		want := "an array"
		if kind == '{' {
			want = "an object"
		}
		return fmt.Sprintf("%q is not %s", member, want)
	}
	return ""
}
