package sandbox

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
)

// Runtimes a module can run on (Limits.Runtime, EngineOptions.Runtime).
const (
	// RuntimeNative is mcphost's own implementation of the Extism kernel
	// (extism:host/env) on wazero, the default.
	RuntimeNative = "native"
	// RuntimeExtism is the Extism Go SDK (go-sdk v1.7.1): the reference
	// the native kernel is tested against, kept as an escape hatch for a
	// plugin that misbehaves on the native one. It costs 10–70 µs and
	// 50–600 KB of allocation more per call.
	RuntimeExtism = "extism"
)

// checkRuntime returns r, or the default for "", or an error.
func checkRuntime(r string) (string, error) {
	switch r {
	case "":
		return RuntimeNative, nil
	case RuntimeNative, RuntimeExtism:
		return r, nil
	}
	return "", fmt.Errorf("runtime %q is not %q or %q", r, RuntimeNative, RuntimeExtism)
}

// backend is one compiled module on one runtime.
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
