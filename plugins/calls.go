package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/sandbox"
)

// The questions plugins ask a plugin's guest go through its
// sandbox.Guest, which speaks the plugin's kind (Extism v1, v2, or a
// component's WIT types); plugins checks names, arguments and consent
// before, and schemas after.

// ErrNotSupported is matched (errors.Is) by the error of a call the plugin
// cannot serve because it lacks the export (for example get_prompt on a v1
// plugin). Such errors also match sandbox.ErrMissingExport.
var ErrNotSupported = sandbox.ErrNotSupported

// ErrNotFound is matched by the error of a call naming a tool or prompt the
// plugin does not expose (also one left out by include_tools or
// exclude_tools).
var ErrNotFound = errors.New("not found")

// UnsupportedError says a plugin lacks the export a call needs.
type UnsupportedError = sandbox.UnsupportedError

// OutputError says a plugin's output is not valid JSON or not of the shape
// its export promises.
type OutputError = sandbox.OutputError

// callTool calls the plugin's tool by its own name (Tool.Original). The
// result is the guest's CallToolResult, checked to be an object with a
// "content" array. A guest failure (trap, timeout, …) comes back as the
// module's error (*sandbox.CallError for Wasm). valid says args are
// known to be valid JSON (Tool.run validated them against the tool's
// schema); otherwise they are checked here.
func (p *Plugin) callTool(ctx context.Context, original string, args json.RawMessage, cc abi.Context, valid bool) (sandbox.ToolResult, error) {
	t := p.tools[original]
	if t == nil {
		return sandbox.ToolResult{}, fmt.Errorf("plugin %q: tool %q: %w", p.Name, original, ErrNotFound)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = nil
	} else if !valid && !jsonscan.Valid(args) {
		return sandbox.ToolResult{}, fmt.Errorf("plugin %q: encode input: arguments are not valid JSON", p.Name)
	}
	ref := sandbox.ToolRef{Name: original, Index: t.index}
	var res sandbox.ToolResult
	err := p.core.ask(ctx, abi.ExportCallTool, func(ctx context.Context) (err error) {
		res, err = p.core.guest.CallTool(ctx, ref, args, cc)
		return err
	})
	return res, err
}

// readResource reads uri; the result must have a "contents" array.
func (p *Plugin) readResource(ctx context.Context, uri string, cc abi.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := p.core.ask(ctx, abi.ExportReadResource, func(ctx context.Context) (err error) {
		out, err = p.core.guest.ReadResource(ctx, uri, cc)
		return err
	})
	return out, err
}

// getPrompt renders the plugin's own prompt name (Prompt.Def.Name); the
// result must have a "messages" array.
func (p *Plugin) getPrompt(ctx context.Context, name string, args map[string]string, cc abi.Context) (json.RawMessage, error) {
	if p.prompts[name] == nil {
		return nil, fmt.Errorf("plugin %q: prompt %q: %w", p.Name, name, ErrNotFound)
	}
	var out json.RawMessage
	err := p.core.ask(ctx, abi.ExportGetPrompt, func(ctx context.Context) (err error) {
		out, err = p.core.guest.GetPrompt(ctx, name, args, cc)
		return err
	})
	return out, err
}

// complete asks for completions; a prompt reference should carry the
// plugin's own prompt name. The result must have a "completion" object.
func (p *Plugin) complete(ctx context.Context, params abi.CompleteParams, cc abi.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := p.core.ask(ctx, abi.ExportComplete, func(ctx context.Context) (err error) {
		out, err = p.core.guest.Complete(ctx, params, cc)
		return err
	})
	return out, err
}

// rootsListChanged tells the plugin the client's roots changed, when it
// listens; otherwise it does nothing.
func (p *Plugin) rootsListChanged(ctx context.Context, cc abi.Context) error {
	return p.core.ask(ctx, abi.ExportOnRootsListChanged, func(ctx context.Context) error {
		return p.core.guest.RootsListChanged(ctx, cc)
	})
}
