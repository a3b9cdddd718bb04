package sandbox

import (
	"context"
	"log/slog"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/sandbox/component"
	"github.com/mcphost/mcphost/sandbox/limits"
)

// RuntimeNative names what every module runs on: mcphost's own
// implementation of the Extism kernel (extism:host/env) on wazero. It is
// the only runtime; callers report it (mcphost validate).
const RuntimeNative = limits.RuntimeNative

// newBackend compiles wasm under rc for the module name with limits lim. The
// Engine loads modules with the native kernel (nativeWith); tests load the
// same modules on the Extism Go SDK, the reference the kernel is checked
// against (extism_test.go), through the same Module code.
type newBackend func(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, name string, lim Limits, log *slog.Logger) (backend, map[string]signature, error)

// backend is one compiled module.
type backend interface {
	// instantiate creates an instance configured by mc (stdio, clocks,
	// env). It runs no guest code.
	instantiate(ctx context.Context, mc wazero.ModuleConfig) (guest, error)
	// close stops every instance; drained says none is running, so the
	// compiled code may be released too.
	close(ctx context.Context, drained bool) error
}

// guest is one instance of a backend. It serves one call at a time.
type guest interface {
	// call runs an Extism export with the semantics of go-sdk's
	// Plugin.CallWithContext: rc is the export's result (or an exit
	// code), err a runtime failure or the guest's error_set message.
	call(ctx context.Context, export string, input []byte) (rc uint32, out []byte, err error)
	// guestError is the error_set message of the last call, or "".
	guestError() string
	close()
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
	return g.call(ctx, export, in.bytes)
}
