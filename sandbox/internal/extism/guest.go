package extism

import (
	"context"
	"encoding/json"
	"fmt"
)

// The data of the sandbox's Guest seam, which the Extism kinds of Guest
// ([V1], [V2]) answer with. The sandbox root gives them their public
// names by type aliases (sandbox.ToolResult, …), and its component kind
// answers with the same types.

// ToolResult is a tool's answer: the guest's CallToolResult, checked to
// be an object with a "content" array, and the two members its host acts
// on, found in the same pass (of duplicates, the last, as encoding/json
// picks).
type ToolResult struct {
	JSON       json.RawMessage
	IsError    bool            // its "isError" is true
	Structured json.RawMessage // its "structuredContent", nil when absent
}

// ToolRef names a tool of a Guest: its own name, and its place in the
// tools of the Guest's Lists, resolved once when the list was read. A
// component calls the function at Index; the Extism kinds send Name.
type ToolRef struct {
	Name  string
	Index int
}

// Lists are the raw items of what a plugin lists, each as the guest wrote
// it. The JSON names are those of the list cache's entries.
type Lists struct {
	Tools     []json.RawMessage `json:"tools,omitempty"`
	Resources []json.RawMessage `json:"resources,omitempty"`
	Templates []json.RawMessage `json:"templates,omitempty"`
	Prompts   []json.RawMessage `json:"prompts,omitempty"`
	Skills    []json.RawMessage `json:"skills,omitempty"` // abi.SkillFile items of mcphost_list_skills
}

// Caller is a plugin's code at the byte level of the Extism ABI: a
// sandbox Module, or a Go implementation of the same ABI (tests,
// built-ins). Call must be safe for concurrent use.
type Caller interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
	HasExport(name string) bool
}

// OutputError says a plugin's output is not valid JSON or not of the shape
// its export promises.
type OutputError struct {
	Plugin, Export, Msg string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("plugin %q: %s: bad output: %s", e.Plugin, e.Export, e.Msg)
}

// Errors makes and amends the errors of its caller's own types (the
// sandbox root's *UnsupportedError and *CallError), which this package
// cannot import.
type Errors struct {
	// Unsupported is the error of a question whose export the plugin
	// lacks.
	Unsupported func(plugin, export string) error
	// Rename makes err, a call of the export from, name the export to:
	// a tool call sent to a frame export reports call_tool.
	Rename func(err error, from, to string)
}
