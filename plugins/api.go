package plugins

import (
	"encoding/json"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
)

// Plugin is one loaded plugin.
type Plugin struct {
	Name string
	ABI  int // 1 (describe/call) or 2 (hyper-mcp v2); guests built with sdk-guest also report abi.Version
	// GuestVersion is the abi.Version the guest reports through
	// mcphost_abi_version, or 0 when it does not export it.
	GuestVersion int
	Spec         config.Spec
	// Runtime is what the plugin runs on: a sandbox runtime, or
	// "in-process" for a Native module.
	Runtime string

	Tools     []*Tool // this plugin's tools, in its own order
	Resources []*Resource
	Templates []*Template
	Prompts   []*Prompt
	// Skills are the skills the plugin serves (skills.go), sorted by URI;
	// each one's SKILL.md is also among Resources.
	Skills []*Skill
	// Hidden are the plugin's tools its filters left out (read_only,
	// include_tools, exclude_tools), by the plugin's own name.
	Hidden []HiddenTool
	// skillWarnings are the skills refused, each saying why.
	skillWarnings []string
	// skillDirs are the skills directories as read for this plugin: a
	// generation that keeps or relists it builds its skills from them
	// without reading the disk again.
	skillDirs *dirSkills

	// core is the loaded module and what it listed. Generations share
	// cores: one whose code and limits did not change is reused as is.
	core    *core
	hash    string // identity of the core and this plugin's view (filters, names)
	tools   map[string]*Tool
	prompts map[string]*Prompt
	apps    map[string][]byte // URI → HTML of the [plugin.ui] pages (apps.go)
	// appGuest maps the URI of each page moved under the plugin's ui://
	// namespace to the one its guest listed (apps.go).
	appGuest map[string]string
}

// HiddenTool is a tool of a plugin that a filter left out.
type HiddenTool struct {
	Original string `json:"original"` // the plugin's own name for it
	Name     string `json:"name"`     // the name it would have been listed under
	Filter   string `json:"filter"`   // the plugins.toml key that hid it: read_only, include_tools or exclude_tools
}

// Tool is one exposed tool.
type Tool struct {
	Name     string // exposed name (namespaced, valid, unique in its generation)
	Original string // the plugin's own name
	Plugin   *Plugin
	Def      abi.Tool        // as the plugin listed it (Def.Name is Original)
	Raw      json.RawMessage // the plugin's JSON for this tool, verbatim, with "name" set to Name

	in, out *jsonschema.Schema // compiled inputSchema and outputSchema (nil when absent)
	index   int                // its place in the guest's list (sandbox.ToolRef)
	flat    *flatSchema        // in's one-pass form, when it has one
	outFlat *flatSchema        // out's one-pass form, when it has one
}

// TaskSupport is the tool's execution.taskSupport: abi.TaskOptional or
// abi.TaskRequired for a tool run as a task, abi.TaskForbidden otherwise.
func (t *Tool) TaskSupport() string {
	if e := t.Def.Execution; e != nil && (e.TaskSupport == abi.TaskOptional || e.TaskSupport == abi.TaskRequired) {
		return e.TaskSupport
	}
	return abi.TaskForbidden
}

// Resource is one listed resource.
type Resource struct {
	Plugin *Plugin
	Def    abi.Resource
	Raw    json.RawMessage // verbatim
}

// Template is one resource template.
type Template struct {
	Plugin *Plugin
	Def    abi.ResourceTemplate
	Raw    json.RawMessage // verbatim

	tpl *uriTemplate // nil when the template uses expressions mcphost cannot match
}

// Prompt is one prompt.
type Prompt struct {
	Name   string // exposed name (prompts are not namespaced unless they collide)
	Plugin *Plugin
	Def    abi.Prompt
	Raw    json.RawMessage
}

// Failure records a plugin that did not load.
type Failure struct {
	Plugin string
	Err    error
	// Kept says the previous generation's plugin of this name serves in
	// the new generation in place of the version that failed (see
	// [Loader.Build]); false means the plugin is absent.
	Kept bool
}

// Generation is an immutable set of loaded plugins and their merged lists.
// Lists are sorted (tools and prompts by Name, resources by URI, templates
// by URITemplate) so cursors are stable.
type Generation struct {
	ID       uint64
	Config   *config.Config
	Plugins  []*Plugin // in config order
	Failures []Failure

	Tools     []*Tool
	Resources []*Resource
	Templates []*Template
	Prompts   []*Prompt
	Skills    []*Skill // sorted by URI

	plugins    map[string]*Plugin
	skillFiles map[string]*SkillFile
	tools      map[string]*Tool
	prompts    map[string]*Prompt
	resources  map[string]*Resource
	closeOnce  sync.Once
}

// Changes says what differs between two generations.
type Changes struct {
	Tools, Resources, Prompts bool
	// Reloaded names the plugins that were added, removed or replaced.
	Reloaded []string
	// Updated lists resource URIs (and templates) served by reloaded plugins.
	Updated []string
	// Initial marks the changes of the initial load (its first Swap, and
	// the Publishes before it): only clients answered before it was done
	// (from what had loaded so far) need to hear of them.
	Initial bool
}

// Any reports whether anything changed.
func (c Changes) Any() bool {
	return c.Tools || c.Resources || c.Prompts || len(c.Reloaded) > 0 || len(c.Updated) > 0
}
