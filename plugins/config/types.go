package config

import (
	"context"
	"net/netip"
	"time"

	"github.com/mcphost/mcphost/sandbox/limits"
)

// Module is a plugin's code as a Spec carries it: a *sandbox.Module, or a
// plugin implemented in Go rather than Wasm (tests, benchmarks,
// built-ins) that a Spec carries as Native: a sandbox.Caller (Call and
// HasExport, here by method so that config links no sandbox) that the
// generations holding it close. plugins.Module is this interface.
type Module interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
	HasExport(name string) bool
	Close(ctx context.Context) error
}

// Config is a parsed, validated plugins.toml.
type Config struct {
	File    string `owned:"decides" what:"the config file %s (a plugin could rewrite its own limits)"` // the file it was read from ("" when built in code)
	Server  ServerConfig
	Plugins []Spec
	// Auth is the [auth] table (OAuth bearer tokens over HTTP), or nil.
	Auth *Auth
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
	// ShutdownGrace bounds how long a stopping server (SIGTERM, SIGINT,
	// stdin closed) waits for the calls in flight to answer before it
	// cancels them (default 10s, see DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// PluginDir is a drop-in directory of *.wasm files (may be "").
	PluginDir string `owned:"runs,dir" what:"the plugin_dir (a plugin could add plugins)"`
	// CacheTTL and CacheScope are the caching hints of 2026-07-28 list and
	// read results (default 0 and "private"); a plugin may set its own
	// (see Spec.CacheTTL).
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
	// Store is the URL of what replicas share (redis:// or rediss://,
	// see store.ParseRedisURL); "" is the in-process store. The
	// MCPHOST_STORE environment variable wins over it (store.URL).
	Store string
	// Defaults applied to every plugin that does not set its own.
	Timeout      time.Duration // default 5s
	CancelGrace  time.Duration // default 1s (sandbox.DefaultCancelGrace)
	MemoryPages  uint32        // default 4096 (256 MiB)
	MaxInstances int           // default runtime.NumCPU()
	// LoadTimeout bounds each plugin's whole load, to its lists read:
	// fetch, build, compile, start functions (default 2m, see
	// DefaultLoadTimeout, which zero means). A plugin past it fails alone.
	LoadTimeout time.Duration

	// Go-source builds (issue 11).

	// Go is the go command that builds `source =` plugins (absolute,
	// resolved against the config's directory); "" means [source.FindGo]. A
	// cached build needs no go command at all.
	Go string `owned:"runs" what:"the go command (a plugin could change what builds Go-source plugins)"`

	// StrictSchemas refuses tools whose inputSchema or outputSchema is not
	// valid JSON Schema (default false: such a tool is listed as declared,
	// with a warning, and its arguments are not validated).
	StrictSchemas bool
	// SecretsFile is read for secrets not found in the environment (see
	// Spec.AllowedSecrets); "" means none.
	SecretsFile string `owned:"decides" what:"the server's secrets_file (a plugin could read or replace every plugin's secrets)"`

	// Limits of the HTTP transport; zero means the host's defaults (see
	// streamable.Options in host/streamable, where each is explained).
	BodyTimeout           time.Duration
	MaxInFlightPerSession int
	MaxInFlightPerClient  int
	MaxSessions           int

	// ReadOnly applies read_only to every plugin that does not set its
	// own (see Spec.ReadOnly).
	ReadOnly bool
	// Replicas behind a balancer (issue 31).

	// TrustedProxies are the peers whose X-Forwarded-For names the
	// client (default none: the peer's own address is the client's).
	TrustedProxies []netip.Prefix
	// RatePerClient bounds the requests per identity (zero: no limit).
	RatePerClient Rate
	// DrainGrace is how long a stopping server keeps serving while
	// /readyz answers 503 (default DefaultDrainGrace; 0 skips it).
	DrainGrace time.Duration

	// hidden is Config.Hidden of the file this was read from
	// (ServerConfig.Hidden).
	hidden []string
}

// Hidden is [Config.Hidden] of the file this table was read from (nil
// for a table built in code): the files the sandbox hides from every
// plugin with a mount (sandbox.Limits.Hidden).
func (sc *ServerConfig) Hidden() []string { return sc.hidden }

// Spec is one [[plugin]] table. A zero Timeout, MemoryPages or
// MaxInstances means the [ServerConfig] default.
type Spec struct {
	Name    string
	Path    string `owned:"runs" what:".wasm"`                // a .wasm file (absolute, resolved against the config's directory)
	Source  string `owned:"runs,dir" what:"source directory"` // a Go package directory (absolute); exactly one of Path and Source
	SHA256  string // optional pin of the .wasm (hex)
	Timeout time.Duration
	// CancelGrace is how long a call the client cancelled may run on
	// (sandbox.Limits.CancelGrace); zero means the server's.
	CancelGrace time.Duration
	MemoryPages uint32
	// LoadTimeout overrides ServerConfig.LoadTimeout when not zero.
	LoadTimeout time.Duration
	// AllowedHosts are the rules of outbound HTTP (sandbox.Limits.AllowedHosts),
	// each checked by limits.CheckAllowedHost.
	AllowedHosts []string
	// MayRequestHosts are rules in allowed_hosts' syntax naming what the
	// plugin may ask a person for (sandbox.Limits.MayRequestHosts): a
	// connection they name and AllowedHosts does not allow pauses the
	// call and asks the client's user; anything else is refused unasked.
	MayRequestHosts []string
	// AllowPrivateNetworks lets an allowed name resolve to a loopback,
	// private, link-local, CGNAT or unspecified address.
	AllowPrivateNetworks bool
	AllowedPaths         []limits.Mount `reach:"allowed_paths"`
	// MayRequestPaths are directories, in allowed_paths' syntax, the
	// plugin may ask a person for (sandbox.Limits.MayRequestPaths): each
	// is mounted, and a call's first read or write under it asks the
	// client's user; a :ro one is never asked for write.
	MayRequestPaths []limits.Mount `reach:"may_request_paths"`
	Env             map[string]string
	Config          map[string]string
	MaxInstances    int
	// KVMaxKeys and KVMaxBytes bound the plugin's key-value state (the
	// kv host function, guest.KV, wasi:keyvalue): keys, and bytes of keys
	// and values together; 0 means DefaultKVMaxKeys / DefaultKVMaxBytes.
	KVMaxKeys    int64
	KVMaxBytes   int64
	IncludeTools []string // glob patterns (path.Match) on the plugin's own tool names
	ExcludeTools []string
	// TaskTools (glob patterns, like IncludeTools) names the tools run
	// as tasks for clients that declare the tasks extension: a matching
	// tool that does not declare execution.taskSupport itself is listed
	// with "optional".
	TaskTools []string
	// ReadOnly (read_only) keeps only the tools whose annotations say
	// readOnlyHint: true, beside IncludeTools and ExcludeTools; nil means
	// ServerConfig.ReadOnly (see ReadOnlyTools).
	ReadOnly *bool
	// Skills are absolute globs of skill directories (each holding a
	// SKILL.md) the plugin serves beside its guest's (skills = …,
	// relative to the plugin's directory).
	Skills []string `owned:"runs,glob" what:"skills directory"`
	// ToolPrefix is prepended to every tool name; nil means Name+"_".
	ToolPrefix *string
	// StrictSchemas overrides ServerConfig.StrictSchemas when set.
	StrictSchemas *bool
	// UnsetEnv are the keys a policy's environment.allow grants that
	// mcphost's own environment does not set: the plugin does not get
	// them, and its load says so.
	UnsetEnv []string
	// AllowedSecrets name the secrets the guest may read through the
	// get_keyring_secret host function; each is looked up in the
	// environment, then in SecretsFile (or ServerConfig.SecretsFile).
	AllowedSecrets []string
	SecretsFile    string `owned:"decides" what:"secrets_file (a plugin could read or replace its secrets)"`
	// Policy is the wassette policy file whose grants the table applies
	// (policy = …, absolute), or "".
	Policy string `owned:"decides" what:"policy file (a plugin could grant itself hosts, paths and environment)"`
	// CacheTTL and CacheScope override ServerConfig.CacheTTL and
	// ServerConfig.CacheScope for what this plugin serves: the ttlMs and
	// cacheScope of its resources/read results, and the most conservative
	// of its and the other contributors' values on a list. nil and "" mean
	// the server's.
	CacheTTL   *time.Duration
	CacheScope string
	// Line is where the [[plugin]] table starts in File (for messages).
	Line int

	// Remote sources (source_url.go, source_oci.go). At most one of Path,
	// Source, URL and OCI is set.
	URL string // an https URL of a .wasm file; SHA256 is required with it
	OCI string // "registry/repository[:tag]@sha256:<hex>": a Wasm image pinned by manifest digest
	// Build is the command that writes Path (build = …, build.go): its
	// argv, run without a shell in BuildDir (absolute). Watch are the
	// absolute globs of its sources; a save of one runs it again, and it
	// runs before a load whenever Path is missing or older than one of
	// them. Nil Build means Path is used as it is.
	Build    []string
	BuildDir string   `owned:"runs,dir" what:"build directory"`
	Watch    []string `owned:"runs,glob" what:"watched sources"`

	// Signature is the [plugin.signature] table (url and oci sources
	// only), or nil: who must have signed the plugin. With it, oci may be
	// a bare tag and url needs no sha256 (signature.go).
	Signature *Signature

	// UI is the [plugin.ui] table (ui.go), or nil: the MCP Apps the
	// plugin's tools show.
	UI *UI

	// Native, when set, is used instead of Path/Source. Never set from TOML.
	// Build takes ownership: the module is closed when the last generation
	// holding it closes, so give each spec a Module of its own. Limits do
	// not apply to it.
	Native Module
}

// Signature is a [plugin.signature] table: whose Sigstore signature a url
// or oci plugin must carry before it loads. Exactly one of Key and the
// pair Identity, Issuer is set; nothing matches by default.
type Signature struct {
	// Identity and Issuer are the exact subject alternative name and OIDC
	// issuer of a keyless (Fulcio) signing certificate.
	Identity, Issuer string
	// Key is a PEM public key file (ECDSA P-256 or Ed25519) that signed
	// the bundle; such a bundle carries no log entry or timestamp.
	Key string `owned:"runs" what:"signature key (a plugin could choose whose code is trusted)"`
	// TrustedRoot is a trusted_root.json of a private Sigstore deployment;
	// "" means the public-good root, fetched through TUF and cached.
	TrustedRoot string `owned:"runs" what:"signature trusted_root (a plugin could choose whose code is trusted)"`
	// URL is where a url plugin's bundle is; "" means "<url>.sigstore.json".
	URL string
}
