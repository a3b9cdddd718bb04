package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/sandbox/internal/wasip2"
	"github.com/mcphost/mcphost/sandbox/limits"
)

// EngineOptions configure an [Engine].
type EngineOptions struct {
	// CacheDir holds wazero's compilation cache, one directory per
	// module, every entry checked against the SHA-256 recorded when it was
	// written. "" means os.UserCacheDir()/mcphost/wazero. The directory
	// holds native code and must be writable only by this user; when it
	// cannot be written (a full or read-only disk), modules are compiled
	// in memory and the Engine says so once.
	CacheDir string
	// Logger receives guest logs and stdout/stderr lines. nil means slog.Default().
	Logger *slog.Logger
	// Tracer, when not nil, receives a span for each load, guest call and
	// host function call (see the package doc's Traces). nil starts none.
	Tracer trace.Tracer
	// Propagator writes the trace context of a traced call (W3C
	// traceparent, tracestate, baggage) into the headers of its plugin's
	// outbound HTTP requests, so the server it calls continues the same
	// trace; nil writes none. It matters only with a Tracer.
	Propagator propagation.TextMapPropagator
	// InterpretUntilCompiled makes Load serve a core module whose compiled
	// code is not in the cache on wazero's interpreter while the compiler
	// runs in the background; later calls move to the compiled code
	// (tier.go). A 4 MB Go guest then serves ~0.2 s after Load starts
	// instead of ~1.5 s, at ~13× the cost per call until the swap (or,
	// for an instance that keeps state, until it is replaced). A module
	// whose compiled code is cached loads it as without the option.
	InterpretUntilCompiled bool
	// KeepPrepared keeps each module as prepared for compiling (its data
	// segments merged, its loops polling) beside its compiled code, so
	// that a later load of this executable compiles it as read
	// (prepared.go): ≈ 80 ms of CPU less per load of a 4 MB Go guest.
	KeepPrepared bool
}

// Mount is one allowed path (package limits defines it, so that
// plugins/config builds mounts without wazero).
type Mount = limits.Mount

// Limits bound one module. Zero values mean the documented defaults.
type Limits struct {
	// MemoryPages caps each linear memory, in 64 KiB pages (default 4096 =
	// 256 MiB; at most 65536). Go guests need at least 42 pages.
	MemoryPages uint32
	// Timeout bounds each call (default 5s).
	Timeout time.Duration
	// CancelGrace is how long a call whose caller gave up (the client
	// cancelled it, or its connection or deadline ended) may still run
	// before it is stopped (default 1s; never past Timeout). The guest is
	// told at once: its context is done (the cancelled host function of
	// abi.CallNamespace says 1, and blocking host functions return). One
	// that returns within the grace keeps its instance, and its state;
	// one that does not is stopped, and its instance replaced.
	CancelGrace time.Duration
	// Instances is the size of the warm pool (default runtime.NumCPU()).
	Instances int
	// MaxInputBytes and MaxOutputBytes bound payloads (default 4 MiB / 16 MiB).
	MaxInputBytes  int
	MaxOutputBytes int
	// AllowedHosts are the destinations of http_request; empty denies
	// all. A rule is a host name, "*", "*.example.com" or an IP literal,
	// optionally with ":port" ("[::1]:8080" for IPv6); a rule without a
	// port allows every port. Every connection is checked when it is
	// dialled, redirects included (egress.go); see [limits.CheckAllowedHost].
	AllowedHosts []string
	// MayRequestHosts are rules, in AllowedHosts' syntax, for destinations
	// the module may ask a person for: a connection they match that
	// AllowedHosts does not allow goes to Consent, which asks (or finds
	// a standing grant). Any other destination is refused without asking.
	MayRequestHosts []string
	// Consent decides the destinations MayRequestHosts names and the
	// uses of MayRequestPaths' mounts; nil refuses them as if they were
	// not named. It is not part of what a module is (it is left out of
	// JSON).
	Consent Consent `json:"-"`
	// InterpretFirst lets a module whose compiled code is not cached
	// serve on wazero's interpreter until its compile is ready, when the
	// Engine was opened with EngineOptions.InterpretUntilCompiled
	// (tier.go). With KeepsState, an instance that has served a call
	// stays on the interpreter: only the instances made after the
	// compile (a fault's replacement) and later loads run compiled code.
	InterpretFirst bool `json:"-"`
	// ListOnly says the module is loaded to be read once (its lists) and
	// closed, its code never served: a core module whose compiled code is
	// not cached runs on the interpreter, whatever the Engine's options,
	// and is not compiled in the background, since nothing would run what
	// the compile stores (plugins' lists section is written this way, into
	// code whose hash then differs).
	ListOnly bool `json:"-"`
	// KeepsState says the module's instances keep state between calls
	// (a plugin not declared stateless), which cannot move from the
	// interpreter to compiled code: when the compile is ready (tier.go)
	// an instance that has served a call keeps serving until it fails or
	// the module closes.
	KeepsState bool `json:"-"`
	// AllowPrivateNetworks lets a host name allowed by AllowedHosts
	// resolve to a loopback, private, link-local, CGNAT or unspecified
	// address. Without it only rules that are IP literals or "localhost"
	// reach such addresses.
	AllowPrivateNetworks bool
	// AllowedPaths are preopened directories; empty means no filesystem.
	AllowedPaths []Mount
	// MayRequestPaths are directories the module may ask a person for.
	// Each is mounted like an AllowedPaths entry, behind a gate: in each
	// call, the first operation under it (an open, stat, readlink or a
	// change) asks Consent for read or write, and fails with EACCES
	// unless it is allowed; the answer stands for the rest of the call,
	// and so do the files opened under it (a later call's use of one
	// fails with EACCES). A
	// ReadOnly entry is never asked for write: writes fail with EROFS.
	MayRequestPaths []Mount
	// Hidden are host files no mount shows, whatever name leads to them
	// inside it (a symlink, another hard link): opening, stat-ing or
	// changing one fails with EACCES (rootfs.FS.Hide). The caller decides
	// what they are (package config: the files that decide what plugins
	// may do, which a read-only mount may hold).
	Hidden []string
	// Env is the guest's whole environment.
	Env map[string]string
	// Config is the Extism config (config_get).
	Config map[string]string
	// Secrets are what the guest may read through get_keyring_secret,
	// by name (see keyringSecret for how a request names one). They
	// are never logged; each module sees only its own.
	Secrets map[string]string
	// KV is the module's own key-value bucket, which the kv host
	// function and wasi:keyvalue serve (kv.go); nil refuses them, saying
	// so. It is not part of what a module is (it is left out of JSON);
	// KVMaxKeys and KVMaxBytes, the bounds its KV enforces, are.
	KV         KV `json:"-"`
	KVMaxKeys  int64
	KVMaxBytes int64
}

// KV is a plugin's key-value state, kept apart from its instances (in
// the server's store, which replicas share): what the kv host function
// (kv.go) and wasi:keyvalue serve. It is defined beside wasi:keyvalue's
// host code (sandbox/internal/wasip2), which cannot import this package.
type KV = wasip2.KeyValue

// Kind classifies a failed call.
type Kind int

const (
	KindTrap          Kind = iota + 1 // unreachable, Go panic, divide by zero, stack overflow, OOB
	KindTimeout                       // the call's time budget ran out
	KindCanceled                      // the caller's context was cancelled
	KindOutOfMemory                   // the guest ran out of memory
	KindGuestError                    // the guest called error_set (or returned non-zero)
	KindBadOutput                     // the output is too large (or, for callers, not valid JSON)
	KindMissingExport                 // the export does not exist
	KindExit                          // the guest called proc_exit
	KindHostPanic                     // a host function failed
	KindBadInput                      // the input is too large
	KindClosed                        // the module was closed
)

var kindNames = map[Kind]string{
	KindTrap: "trap", KindTimeout: "timeout", KindCanceled: "canceled", KindOutOfMemory: "out of memory",
	KindGuestError: "guest error", KindBadOutput: "bad output", KindMissingExport: "missing export",
	KindExit: "exit", KindHostPanic: "host function failed", KindBadInput: "input too large", KindClosed: "closed",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// CallError is every error [Module.Call] returns.
type CallError struct {
	Module string // module (plugin) name
	Export string
	Kind   Kind
	// Detail is a human-readable cause: the guest's error message, the
	// trap message, or the tail of the guest's stderr (a Go panic's text).
	Detail string
	Err    error // underlying runtime error, if any
}

func (e *CallError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s: %s: %s", e.Module, e.Export, e.Kind)
	}
	return fmt.Sprintf("%s: %s: %s: %s", e.Module, e.Export, e.Kind, e.Detail)
}

func (e *CallError) Unwrap() error { return e.Err }

// Is lets errors.Is(err, sandbox.ErrTimeout) and friends work.
func (e *CallError) Is(target error) bool {
	k, ok := target.(kindError)
	return ok && Kind(k) == e.Kind
}

type kindError Kind

func (k kindError) Error() string { return Kind(k).String() }

// Sentinels for errors.Is.
var (
	ErrTrap          error = kindError(KindTrap)
	ErrTimeout       error = kindError(KindTimeout)
	ErrCanceled      error = kindError(KindCanceled)
	ErrOutOfMemory   error = kindError(KindOutOfMemory)
	ErrGuest         error = kindError(KindGuestError)
	ErrMissingExport error = kindError(KindMissingExport)
)

// ErrEngineClosed is wrapped by the [LoadError] of a load that met its
// Engine closed: the process is shutting down, not the module at fault.
var ErrEngineClosed = errors.New("engine is closed")

// LoadError is returned by [Engine.Load] (bad wasm, limits below the module's
// minimum, instantiation failure).
type LoadError struct {
	Module string
	Stage  string // "compile", "instantiate", "limits"
	Err    error
}

func (e *LoadError) Error() string { return fmt.Sprintf("%s: %s: %v", e.Module, e.Stage, e.Err) }
func (e *LoadError) Unwrap() error { return e.Err }

// Peer is how host functions reach the MCP client of the call being served.
// The host package implements it; sandbox only routes. Every method is
// bounded by ctx (the call's own deadline and cancellation).
type Peer interface {
	// Request sends a server→client request (sampling/createMessage,
	// elicitation/create, roots/list) and waits for its result.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends a notification (notifications/message, notifications/progress,
	// notifications/*/list_changed, notifications/resources/updated, …).
	Notify(ctx context.Context, method string, params json.RawMessage) error
}

// Reach is what a module reached for beyond its limits: a host (Host and
// Port) or a directory (Path and Write).
type Reach struct {
	Plugin string // the module's name
	Host   string // lower case; an IP literal without brackets
	Port   uint16
	Path   string // a MayRequestPaths host directory, absolute
	Write  bool   // Path is to be written, not only read
}

// Target is the reach as "host:port" ("[::1]:443" for IPv6), or as the
// directory for a path.
func (r Reach) Target() string {
	if r.Path != "" {
		return r.Path
	}
	return net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port)))
}

// Consent decides a reach a module's Limits.MayRequestHosts names and its
// AllowedHosts does not allow, or a use of a MayRequestPaths mount. The
// sandbox asks it when the connection is dialled, or at the call's first
// operation under the mount, with the ctx of the call being served (its
// Peer, deadline and cancellation), and refuses unless it returns nil; for
// a host the error's text is the refusal's reason, which the guest sees,
// and for a path it is logged (the guest sees EACCES). It must honour ctx:
// a call waits for it.
type Consent interface {
	Allow(ctx context.Context, r Reach) error
}

type peerKey struct{}

// WithPeer returns a context whose calls route host functions to p.
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

// IsPeerKey reports whether key is the one WithPeer stores its Peer
// under, so that a caller's own context type, made once for a call
// anyway, can carry the call's Peer in its Value method instead of a
// context.WithValue per call: PeerFrom finds it either way.
func IsPeerKey(key any) bool {
	_, ok := key.(peerKey)
	return ok
}

// PeerFrom returns the Peer in ctx, or nil.
func PeerFrom(ctx context.Context) Peer {
	p, _ := ctx.Value(peerKey{}).(Peer)
	return p
}

// ErrNoPeer is returned to a host function called outside any client request.
var ErrNoPeer = errors.New("no client is attached to this call")
