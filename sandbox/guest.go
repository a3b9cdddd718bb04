package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
)

// The seam between plugins and the sandbox: a Guest answers the questions
// an MCP server asks a plugin, typed, whatever the plugin is made of. Each
// kind speaks its own wire: an Extism v1 plugin gets {"params":…} on
// describe and call, a v2 (hyper-mcp) plugin {"request":…,"context":…}
// envelopes on its nine exports, except that a tool call goes to a
// guest's mcphost_call_tool_members or mcphost_call_tool as an
// abi.CallFrame when it exports one (sandbox/internal/extism), and a component is
// called through its WIT types, its arguments converted once from JSON to
// WIT values, with no envelope in between (componentbackend.go).

// Guest is a plugin's code as its host asks it: its lists, and one method
// for each MCP question it may answer. Every result is the guest's JSON
// for the MCP result (a tool's in a [ToolResult]), checked to be an
// object with the member its question promises ("content", "contents",
// "messages", "completion"); otherwise the error is an *OutputError. A question the plugin does not
// answer fails with an *UnsupportedError. A guest failure (trap, timeout,
// …) is the module's error, a *CallError for Wasm. A Guest is safe for
// concurrent use; closing is its module's business.
type Guest interface {
	// ABI is 1 for an Extism v1 plugin (describe and call, tools only)
	// and 2 for a v2 plugin or a component.
	ABI() int
	// Lists returns the items of the plugin's lists, as the guest wrote
	// them.
	Lists(ctx context.Context) (*Lists, error)
	// CallTool calls the tool tool; args is a JSON object, or empty for
	// none, and must be valid JSON (the caller checked it).
	CallTool(ctx context.Context, tool ToolRef, args json.RawMessage, cc abi.Context) (ToolResult, error)
	// ReadResource reads uri.
	ReadResource(ctx context.Context, uri string, cc abi.Context) (json.RawMessage, error)
	// GetPrompt renders the plugin's prompt name with args.
	GetPrompt(ctx context.Context, name string, args map[string]string, cc abi.Context) (json.RawMessage, error)
	// Complete completes a prompt's or a template's argument. The "ref/"
	// prefix of params.Ref.Type is stripped, as hyper-mcp does, so guests
	// see "prompt" or "resource".
	Complete(ctx context.Context, params abi.CompleteParams, cc abi.Context) (json.RawMessage, error)
	// RootsListChanged tells the plugin the client's roots changed, when
	// it listens (a v2 plugin exporting on_roots_list_changed); otherwise
	// it does nothing.
	RootsListChanged(ctx context.Context, cc abi.Context) error
}

// The Guest's data, defined beside the Extism kinds of Guest
// (sandbox/internal/extism), which make most of it.
type (
	// ToolResult is a tool's answer: the guest's CallToolResult, checked
	// to be an object with a "content" array, and the two members its
	// host acts on, found in the same pass (of duplicates, the last, as
	// encoding/json picks).
	ToolResult = extism.ToolResult
	// ToolRef names a tool of a Guest: its own name, and its place in the
	// tools of [Guest.Lists], resolved once when the list was read. A
	// component calls the function at Index; the Extism kinds send Name.
	ToolRef = extism.ToolRef
	// Lists are the raw items of what a plugin lists, each as the guest
	// wrote it. The JSON names are those of the list cache's entries.
	Lists = extism.Lists
	// Caller is a plugin's code at the byte level of the Extism ABI: a
	// *Module, or a Go implementation of the same ABI (tests, built-ins).
	// Call must be safe for concurrent use.
	Caller = extism.Caller
	// OutputError says a plugin's output is not valid JSON or not of the
	// shape its export promises.
	OutputError = extism.OutputError
)

// NewGuest returns the Guest of m for the plugin called plugin (the name
// guests see in their context): a component's when m is one, else an
// Extism v1 or v2 plugin's, told apart by export names as hyper-mcp does
// ("describe" and "call" make v1; any v2 export makes v2).
func NewGuest(m Caller, plugin string) (Guest, error) {
	if mod, ok := m.(*Module); ok {
		if b := mod.component(); b != nil {
			return &componentPlugin{m: mod, b: b, plugin: plugin}, nil
		}
	}
	v2 := extism.NewV2(m, plugin, extismErrors)
	if mod, ok := m.(*Module); ok {
		v2.MaxOutput = mod.lim.MaxOutputBytes
	}
	if m.HasExport(abi.ExportDescribe) && m.HasExport(abi.ExportCall) {
		return extism.NewV1(v2), nil
	}
	for _, e := range v2Exports {
		if m.HasExport(e) {
			return v2, nil
		}
	}
	if x, ok := m.(interface{ Exports() []string }); ok {
		return nil, fmt.Errorf("unknown ABI: exports %q (want list_tools, call_tool, … or describe and call)", x.Exports())
	}
	return nil, fmt.Errorf("unknown ABI: no known export (want list_tools, call_tool, … or describe and call)")
}

// extismErrors are the errors of this package's types that the Extism
// kinds of Guest make: a missing export's, and a frame call's reported as
// call_tool's.
var extismErrors = extism.Errors{
	Unsupported: func(plugin, export string) error { return &UnsupportedError{Plugin: plugin, Export: export} },
	Rename: func(err error, from, to string) {
		if ce := (*CallError)(nil); errors.As(err, &ce) && ce.Export == from {
			ce.Export = to
		}
	},
}

// v2Exports are the exports that make a module a hyper-mcp v2 plugin.
var v2Exports = []string{
	abi.ExportListTools, abi.ExportCallTool, abi.ExportListResources, abi.ExportListResourceTemplates,
	abi.ExportReadResource, abi.ExportListPrompts, abi.ExportGetPrompt, abi.ExportComplete,
}

// ErrNotSupported is matched (errors.Is) by the error of a question the
// plugin cannot answer because it lacks the export (an
// [UnsupportedError]).
var ErrNotSupported = errors.New("not supported")

// UnsupportedError says a plugin lacks the export a call needs.
type UnsupportedError struct {
	Plugin, Export string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("plugin %q does not export %q", e.Plugin, e.Export)
}

// Is makes errors.Is match [ErrNotSupported] and [ErrMissingExport].
func (e *UnsupportedError) Is(target error) bool {
	return target == ErrNotSupported || target == ErrMissingExport
}

// component returns m's component backend, or nil for a core module.
func (m *Module) component() *componentBackend {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, _ := m.be.(*componentBackend)
	return b
}
