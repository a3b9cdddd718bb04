package plugins

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// Module is what a [Plugin] runs on: a *sandbox.Module in production, or a
// native Go implementation of the same byte-level ABI (tests, benchmarks,
// built-ins). Call must be safe for concurrent use.
type Module interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
	HasExport(name string) bool
	Close(ctx context.Context) error
}

// Config is a parsed, validated plugins.toml.
type Config struct {
	File    string // the file it was read from ("" when built in code)
	Server  ServerConfig
	Plugins []Spec
}

// ServerConfig is the [server] table.
type ServerConfig struct {
	Name         string // default "mcphost"
	Instructions string
	// PageSize is the number of items per list page (default 100).
	PageSize int
	// MaxMessageBytes bounds one incoming JSON-RPC message (default 4 MiB).
	MaxMessageBytes int64
	// StartupWait bounds how long the first list requests wait for the
	// initial load (default 50s, see DefaultStartupWait).
	StartupWait time.Duration
	// PluginDir is a drop-in directory of *.wasm files (may be "").
	PluginDir string
	// CacheTTL and CacheScope are the caching hints of 2026-07-28 list and
	// read results (default 0 and "private").
	CacheTTL   time.Duration
	CacheScope string
	// TaskTTL, TaskMaxBytes and TaskAfter bound the tasks extension: how
	// long a task and its result are kept, how much memory kept results
	// may take, and how long a task-capable call that reports no progress
	// runs before it becomes a task (defaults 30m, 64 MiB, 1s).
	TaskTTL      time.Duration
	TaskMaxBytes int64
	TaskAfter    time.Duration
	// RequestStateKeyEnv names the environment variable holding the key
	// that signs 2026-07-28 requestState (default MCPHOST_REQUEST_STATE_KEY).
	RequestStateKeyEnv string
	// Defaults applied to every plugin that does not set its own.
	Timeout      time.Duration // default 5s
	MemoryPages  uint32        // default 4096 (256 MiB)
	MaxInstances int           // default runtime.NumCPU()
	Runtime      string        // sandbox.RuntimeNative (default) or sandbox.RuntimeExtism

	// Go-source builds (issue 11).

	// Go is the go command that builds `source =` plugins (absolute,
	// resolved against the config's directory); "" means [FindGo]. A
	// cached build needs no go command at all.
	Go string

	// StrictSchemas refuses tools whose inputSchema or outputSchema is not
	// valid JSON Schema (default false: such a tool is listed as declared,
	// with a warning, and its arguments are not validated).
	StrictSchemas bool
	// SecretsFile is read for secrets not found in the environment (see
	// Spec.AllowedSecrets); "" means none.
	SecretsFile string

	// Limits of the HTTP transport; zero means the host's defaults (see
	// host.HTTPOptions, where each is explained).
	BodyTimeout           time.Duration
	MaxInFlightPerSession int
	MaxInFlightPerClient  int
	MaxSessions           int
}

// Spec is one [[plugin]] table. A zero Timeout, MemoryPages or
// MaxInstances means the [ServerConfig] default.
type Spec struct {
	Name         string
	Path         string // a .wasm file (absolute, resolved against the config's directory)
	Source       string // a Go package directory (absolute); exactly one of Path and Source
	SHA256       string // optional pin of the .wasm (hex)
	Timeout      time.Duration
	MemoryPages  uint32
	AllowedHosts []string
	AllowedPaths []sandbox.Mount
	Env          map[string]string
	Config       map[string]string
	MaxInstances int
	// Runtime runs the plugin on sandbox.RuntimeNative or
	// sandbox.RuntimeExtism; "" means the server's.
	Runtime      string
	IncludeTools []string // glob patterns (path.Match) on the plugin's own tool names
	ExcludeTools []string
	// TaskTools (glob patterns, like IncludeTools) names the tools run
	// as tasks for clients that declare the tasks extension: a matching
	// tool that does not declare execution.taskSupport itself is listed
	// with "optional".
	TaskTools []string
	// ToolPrefix is prepended to every tool name; nil means Name+"_".
	ToolPrefix *string
	// StrictSchemas overrides ServerConfig.StrictSchemas when set.
	StrictSchemas *bool
	// AllowedSecrets name the secrets the guest may read through the
	// get_keyring_secret host function; each is looked up in the
	// environment, then in SecretsFile (or ServerConfig.SecretsFile).
	AllowedSecrets []string
	SecretsFile    string
	// Line is where the [[plugin]] table starts in File (for messages).
	Line int

	// Remote sources (source_url.go, source_oci.go). At most one of Path,
	// Source, URL and OCI is set.
	URL string // an https URL of a .wasm file; SHA256 is required with it
	OCI string // "registry/repository[:tag]@sha256:<hex>": a Wasm image pinned by manifest digest

	// Native, when set, is used instead of Path/Source. Never set from TOML.
	// Build takes ownership: the module is closed when the last generation
	// holding it closes, so give each spec a Module of its own. Limits do
	// not apply to it.
	Native Module
}

// Plugin is one loaded plugin.
type Plugin struct {
	Name string
	ABI  int // 1 (describe/call) or 2 (hyper-mcp v2); guests built with sdk-guest also report abi.Version
	// GuestVersion is the abi.Version the guest reports through
	// mcphost_abi_version, or 0 when it does not export it.
	GuestVersion int
	Spec         Spec
	// Runtime is what the plugin runs on: a sandbox runtime, or
	// "in-process" for a Native module.
	Runtime string

	Tools     []*Tool // this plugin's tools, in its own order
	Resources []*Resource
	Templates []*Template
	Prompts   []*Prompt

	// core is the loaded module and what it listed. Generations share
	// cores: one whose code and limits did not change is reused as is.
	core    *core
	hash    string // identity of the core and this plugin's view (filters, names)
	tools   map[string]*Tool
	prompts map[string]*Prompt
}

// Tool is one exposed tool.
type Tool struct {
	Name     string // exposed name (namespaced, valid, unique in its generation)
	Original string // the plugin's own name
	Plugin   *Plugin
	Def      abi.Tool        // as the plugin listed it (Def.Name is Original)
	Raw      json.RawMessage // the plugin's JSON for this tool, verbatim, with "name" set to Name

	in, out *jsonschema.Schema // compiled inputSchema and outputSchema (nil when absent)
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
	Config   *Config
	Plugins  []*Plugin // in config order
	Failures []Failure

	Tools     []*Tool
	Resources []*Resource
	Templates []*Template
	Prompts   []*Prompt

	plugins   map[string]*Plugin
	tools     map[string]*Tool
	prompts   map[string]*Prompt
	resources map[string]*Resource
	closeOnce sync.Once
}

// Changes says what differs between two generations.
type Changes struct {
	Tools, Resources, Prompts bool
	// Reloaded names the plugins that were added, removed or replaced.
	Reloaded []string
	// Updated lists resource URIs (and templates) served by reloaded plugins.
	Updated []string
	// Initial marks the changes of the first Swap, the initial load: only
	// clients answered before it (from the empty generation) need to hear
	// of them.
	Initial bool
}

// Any reports whether anything changed.
func (c Changes) Any() bool { return c.Tools || c.Resources || c.Prompts || len(c.Reloaded) > 0 }
