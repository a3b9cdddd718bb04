package plugins

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/mcphost/mcphost/sandbox"
)

// NativeModule returns a [Module] whose exports are Go functions speaking
// the same byte-level JSON ABI as a Wasm plugin: each gets the export's
// input and returns its output. It is how built-in plugins, tests and
// benchmarks plug native handlers into a [config.Spec] (Spec.Native).
//
// Handlers run concurrently and must be safe for that. Their failures are
// reported as *sandbox.CallError, as a guest's would be: a returned error
// is a guest error (KindGuestError, unless it already is a
// *sandbox.CallError), a panic is a trap (KindTrap), a context that ended
// before the call is KindCanceled or KindTimeout, and a missing export is
// KindMissingExport. After Close every call fails with KindClosed.
//
// exports is copied; later changes to the map have no effect.
func NativeModule(exports map[string]func(ctx context.Context, input []byte) ([]byte, error)) Module {
	return &nativeModule{exports: maps.Clone(exports)}
}

type nativeModule struct {
	exports map[string]func(ctx context.Context, input []byte) ([]byte, error)
	closed  atomic.Bool
}

func (m *nativeModule) HasExport(name string) bool {
	_, ok := m.exports[name]
	return ok
}

// Exports returns the export names, sorted.
func (m *nativeModule) Exports() []string {
	return slices.Sorted(maps.Keys(m.exports))
}

func (m *nativeModule) Close(context.Context) error {
	m.closed.Store(true)
	return nil
}

func (m *nativeModule) Call(ctx context.Context, export string, input []byte) (out []byte, err error) {
	fail := func(k sandbox.Kind, detail string, err error) error {
		return &sandbox.CallError{Module: "native", Export: export, Kind: k, Detail: detail, Err: err}
	}
	if m.closed.Load() {
		return nil, fail(sandbox.KindClosed, "", nil)
	}
	fn, ok := m.exports[export]
	if !ok {
		return nil, fail(sandbox.KindMissingExport, "", nil)
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fail(sandbox.KindTimeout, "", err)
		}
		return nil, fail(sandbox.KindCanceled, "", err)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fail(sandbox.KindTrap, fmt.Sprintf("panic: %v", r), nil)
		}
	}()
	out, err = fn(ctx, input)
	if err != nil {
		var ce *sandbox.CallError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fail(sandbox.KindGuestError, err.Error(), err)
	}
	return out, nil
}
