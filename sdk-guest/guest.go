package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// Result is what a tool returns.
type Result = abi.CallToolResult

// ErrNotFound is returned (wrapped) by resource handlers for a URI they do
// not serve. The SDK returns it itself for URIs nothing matches.
var ErrNotFound = errors.New(abi.ResourceNotFound)

// Tool describes a tool registered with [AddTool] or [AddToolOut]. The
// input schema is derived from the handler's argument type unless
// InputSchema is set, in which case it is used verbatim.
type Tool struct {
	Name         string
	Title        string
	Description  string
	Icons        []abi.Icon
	Annotations  *abi.ToolAnnotations
	Meta         json.RawMessage
	InputSchema  json.RawMessage // optional override of the derived schema
	OutputSchema json.RawMessage // optional override (AddToolOut only)
	// TaskSupport is abi.TaskOptional or abi.TaskRequired for a long
	// tool that the host runs as a task (the client polls for its
	// result); empty means abi.TaskForbidden. Such a tool turns into a
	// task when it first reports progress ([Context.Progress]); input
	// it asks for before that is gathered before the task is created.
	TaskSupport string
	// UI is the tool's MCP App, or nil (see [UI]).
	UI *UI
}

// validToolName applies the 2025-11-25 rule for tool names:
// 1 to 128 of A-Z a-z 0-9 _ - and dot.
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

type toolEntry struct {
	def     abi.Tool
	handler func(*Context, json.RawMessage) (*Result, error)
	// decodes says the handler keeps nothing of its raw arguments but
	// what it decoded (a typed tool), so they may lie in a buffer the
	// next call reuses.
	decodes bool
	// flat says what it decodes has a flat plan (flatargs.go): the
	// members a call frame indexes are all it needs of a scan.
	flat bool
}

type resourceEntry struct {
	def     abi.Resource
	handler ResourceHandler
}

type templateEntry struct {
	def     abi.ResourceTemplate
	tmpl    *uriTemplate
	handler TemplateHandler
}

type promptEntry struct {
	def     abi.Prompt
	handler PromptHandler
}

// registry holds everything a plugin registered. Registration normally
// happens in init functions, but handlers may add and remove items at run
// time (and then call NotifyToolListChanged and friends), so it is locked.
type registry struct {
	mu         sync.RWMutex
	tools      []*toolEntry
	resources  []*resourceEntry
	listers    []ResourceLister
	templates  []*templateEntry
	prompts    []*promptEntry
	completers map[completerKey]ArgCompleter
	completer  Completer
	onRoots    func(*Context)
	skills     []abi.SkillFile // skill.go
	frames     frameCache      // frame.go

	// Shared tools (shared.go): nil until NewSharedTools. While capture
	// is not nil, a kind's build is running and addTool collects there.
	shared  *sharedTools
	catchUp func()
	capture []*toolEntry
}

type completerKey struct {
	kind string // "prompt" or "resource"
	name string // prompt name or URI template
	arg  string
}

// std is the registry the package-level functions and the exports use.
var std = newRegistry()

func newRegistry() *registry {
	return &registry{completers: map[completerKey]ArgCompleter{}}
}

func (r *registry) addTool(e *toolEntry) {
	if !validToolName(e.def.Name) {
		panic(fmt.Sprintf("guest: invalid tool name %q: want 1-128 of A-Z a-z 0-9 _ - .", e.def.Name))
	}
	r.mu.Lock()
	if r.capture != nil {
		r.capture = append(r.capture, e)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.putTool(e)
}

// putTool registers e, replacing a tool of the same name.
func (r *registry) putTool(e *toolEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range r.tools {
		if t.def.Name == e.def.Name {
			r.tools[i] = e
			return
		}
	}
	r.tools = append(r.tools, e)
}

func (r *registry) tool(name string) *toolEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.tools {
		if t.def.Name == name {
			return t
		}
	}
	return nil
}

// RemoveTool unregisters a tool. It reports whether the tool existed. Call
// [NotifyToolListChanged] afterwards to tell the client.
func RemoveTool(name string) bool { return std.removeTool(name) }

func (r *registry) removeTool(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, t := range r.tools {
		if t.def.Name == name {
			r.tools = append(r.tools[:i:i], r.tools[i+1:]...)
			return true
		}
	}
	return false
}

// Context is the request a handler serves: the JSON-RPC id, the request's
// _meta (with its progress token), the negotiated protocol version and the
// plugin's configured name, as the host sent them. Its methods reach the
// MCP client through host functions.
//
// A Context is valid only during the call it was made for.
type Context struct {
	abi.Context

	rawOutput []byte
	rawSet    bool

	// The big strings of the call's arguments (bigsOf), found by the
	// envelope's scan; see decodeBig.
	bigs    []jsonscan.String
	bigsOf  []byte
	bigsSet bool

	// The top-level members of the call's arguments (bigsOf), when the
	// envelope's scan recorded them (membersSet); see scanEnvelope.
	members    []abi.ArgMember
	memberBuf  [4]abi.ArgMember
	membersSet bool

	params abi.CallToolParams // the request decodeInputFast returns

	owned *ownedResult // the memory of TextResult's result; nil: none

	// Cancellation (cancel.go): the host said the call is cancelled, and
	// Done's channel, made when asked for.
	cancelled bool
	done      chan struct{}
}

// WriteRawOutput replaces the export's output with b, byte for byte,
// whatever the handler then returns. It exists to test hosts against
// malformed guests; real plugins never need it.
func (c *Context) WriteRawOutput(b []byte) {
	c.rawOutput = append([]byte(nil), b...)
	c.rawSet = true
}

// ProgressToken returns the request's _meta.progressToken as raw JSON (a
// string or a number), or nil when the client did not ask for progress.
func (c *Context) ProgressToken() json.RawMessage {
	if len(c.Meta) == 0 {
		return nil
	}
	var m struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(c.Meta, &m) != nil || len(m.ProgressToken) == 0 || string(m.ProgressToken) == "null" {
		return nil
	}
	return m.ProgressToken
}
