package sandbox

import (
	"context"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/internal/component"
	"github.com/mcphost/mcphost/sandbox/internal/coreruntime"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
	"github.com/mcphost/mcphost/sandbox/limits"
)

// RuntimeNative names what every module runs on: mcphost's own
// implementation of the Extism kernel (extism:host/env) on wazero. It is
// the only runtime; callers report it (mcphost validate).
const RuntimeNative = limits.RuntimeNative

// newBackend compiles wasm under rc for the module name with limits lim. The
// Engine loads modules with the native kernel (nativeWith); tests load the
// same modules on the Extism Go SDK, the reference the kernel is checked
// against (sandbox/internal/oracle), through the same Module code
// (chosenBackend).
type newBackend func(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, name string, lim Limits, log *slog.Logger) (backend, map[string]signature, error)

// backend is one compiled module, guest one instance of it
// (coreruntime.Backend and coreruntime.Guest, which a test's runtime
// implements too).
type (
	backend = coreruntime.Backend
	guest   = coreruntime.Guest
)

// signature is the type of one exported function.
type signature struct {
	params, results []api.ValueType
}

func (s signature) String() string {
	name := func(ts []api.ValueType) string {
		out := "("
		for i, t := range ts {
			if i > 0 {
				out += ", "
			}
			out += api.ValueTypeName(t)
		}
		return out + ")"
	}
	return name(s.params) + " -> " + name(s.results)
}

// callInput is what one call gives its guest: an Extism export's input
// bytes, or a component's tool and its arguments as WIT values.
type callInput struct {
	bytes []byte
	tool  *component.Tool
	args  []any
}

// call runs in on g: a component's tool through its WIT types, anything
// else as an Extism export.
func (in callInput) call(ctx context.Context, g guest, export string) (uint32, []byte, error) {
	if in.tool != nil {
		if cg, ok := g.(*componentGuest); ok {
			return cg.callTool(ctx, in.tool, in.args)
		}
	}
	return g.Call(ctx, export, in.bytes)
}

// chosenBackend returns the constructor of the runtime a Load with ctx runs
// its module on: the native kernel with the loop poll, unless ctx holds
// another coreruntime.Choice (tests: the reference, or close-on-done).
func chosenBackend(ctx context.Context) newBackend {
	c := coreruntime.From(ctx)
	switch {
	case c.New != nil:
		return foreign(c.New)
	case c.CloseOnDone:
		return nativeWith(interruptCloseOnDone)
	}
	return nativeWith(interruptPoll)
}

// foreign adapts a runtime given through package coreruntime.
func foreign(newFB coreruntime.New) newBackend {
	return func(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, name string, lim Limits, log *slog.Logger) (backend, map[string]signature, error) {
		fb, fsigs, err := newFB(ctx, rc, wasm, hostFor(name, lim, log))
		if err != nil {
			return nil, nil, err
		}
		sigs := make(map[string]signature, len(fsigs))
		for name, s := range fsigs {
			sigs[name] = signature{params: s.Params, results: s.Results}
		}
		return fb, sigs, nil
	}
}

// hostFor is what a runtime given through package coreruntime is given for
// the module name with limits lim.
func hostFor(name string, lim Limits, log *slog.Logger) coreruntime.Host {
	return coreruntime.Host{
		Name: name, Log: log, MemoryPages: lim.MemoryPages, Config: lim.Config, AllowedHosts: lim.AllowedHosts,
		MaxHTTPBytes: maxHTTPBytes(lim), MaxVarBytes: extism.MaxVarBytes,
		Serve: func(ctx context.Context, h abi.HostFunc, payload []byte, perr error) []byte {
			return hostFunc(h).serve(ctx, log, lim, payload, perr)
		},
		RequestEnded: requestEnded,
	}
}
