package coreruntime

import (
	"context"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// New compiles wasm under rc for the module host describes.
type New func(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, host Host) (Backend, map[string]Signature, error)

// Backend is one compiled module.
type Backend interface {
	// Instantiate creates an instance configured by mc (stdio, clocks,
	// env, mounts). It runs no guest code.
	Instantiate(ctx context.Context, mc wazero.ModuleConfig) (Guest, error)
	// Close stops every instance; drained says none is running, so the
	// compiled code may be released too.
	Close(ctx context.Context, drained bool) error
}

// Guest is one instance of a Backend. It serves one call at a time.
type Guest interface {
	// Call runs an Extism export with the semantics of go-sdk's
	// Plugin.CallWithContext: rc is the export's result (or an exit
	// code), err a runtime failure or the guest's error_set message.
	Call(ctx context.Context, export string, input []byte) (rc uint32, out []byte, err error)
	// GuestError is the error_set message of the last call, or "".
	GuestError() string
	Close()
}

// Signature is the type of one exported function.
type Signature struct {
	Params, Results []api.ValueType
}

// Host is what the Engine gives a runtime for one module: its limits, as
// far as a runtime enforces them, and the host functions it serves.
type Host struct {
	Name string
	// Log already carries the plugin attribute.
	Log          *slog.Logger
	MemoryPages  uint32
	Config       map[string]string
	AllowedHosts []string
	// MaxHTTPBytes bounds an http_request response body, MaxVarBytes the
	// bytes of the vars.
	MaxHTTPBytes int64
	MaxVarBytes  int
	// Serve runs h, one of abi.HostFuncs, for the call ctx serves:
	// payload is the JSON the guest passed (nil: none), perr a failure to
	// read it. It returns the reply of a request (nil for a notification).
	Serve func(ctx context.Context, h abi.HostFunc, payload []byte, perr error) []byte
	// RequestEnded says the request of the call ctx serves has ended
	// (abi.CallCancelled).
	RequestEnded func(ctx context.Context) bool
}

// Choice says which runtime a Load runs its module on. The zero Choice
// is the Engine's own: the native kernel, stopped by the loop poll.
type Choice struct {
	// New, when set, is the runtime (the reference, in tests).
	New New
	// CloseOnDone stops the native kernel's calls with wazero's
	// close-on-done, as for a module the loop poll refuses.
	CloseOnDone bool
}

type choiceKey struct{}

// With returns ctx for a Load that runs its module on c.
func With(ctx context.Context, c Choice) context.Context {
	return context.WithValue(ctx, choiceKey{}, c)
}

// From returns the Choice ctx carries, or the zero Choice.
func From(ctx context.Context) Choice {
	c, _ := ctx.Value(choiceKey{}).(Choice)
	return c
}
