package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// instance is one guest instance on the module's runtime, with its own
// captured stdout and stderr. It serves one call at a time.
type instance struct {
	be     backend // what it is an instance of
	g      guest
	stdout *lineWriter
	stderr *lineWriter

	lastUse time.Time // when it went back to the pool; guarded by Module.mu

	mu   sync.Mutex
	done <-chan struct{} // Done of the call being served
	// span starts a span in the call being served, for traced file
	// opens (tracedFS); nil when the call is not traced.
	span   func(name string, attrs ...slog.Attr) Span
	traced bool // its mounts are tracedFS
}

// newInstance instantiates the module's backend be once more. It runs no
// guest code: a reactor's _initialize runs on the instance's first call.
func (m *Module) newInstance(ctx context.Context, be backend) (*instance, error) {
	inst := &instance{
		be:     be,
		stdout: newLineWriter(m.log, "stdout", false),
		stderr: newLineWriter(m.log, "stderr", true),
	}
	cfg := m.mc.WithStdout(inst.stdout).WithStderr(inst.stderr).WithNanosleep(inst.nanosleep)
	var g guest
	var err error
	if cb, ok := be.(*componentBackend); ok {
		g, err = cb.instantiateIO(ctx, inst.stdout, inst.stderr)
	} else {
		if len(m.mounts) > 0 {
			cfg = cfg.WithFSConfig(tracedFSConfig(m.mounts, inst))
			inst.traced = true
		}
		g, err = be.instantiate(ctx, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("new instance: %w", err)
	}
	inst.g = g
	m.created.Add(1)
	return inst, nil
}

// nanosleep serves WASI poll_oneoff clock waits (Go's time.Sleep). Unlike
// wazero's WithSysNanosleep it wakes up when the call's context is done:
// wazero only interrupts running Wasm, so a guest sleeping in the host
// would otherwise hold its instance past the call's timeout.
func (inst *instance) nanosleep(ns int64) {
	if ns <= 0 {
		return
	}
	inst.mu.Lock()
	done := inst.done
	inst.mu.Unlock()
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// begin prepares the instance for a call bounded by ctx.
func (inst *instance) begin(ctx context.Context) {
	var span func(string, ...slog.Attr) Span
	if inst.traced {
		span = spanIn(ctx)
	}
	inst.mu.Lock()
	inst.done = ctx.Done()
	inst.span = span
	inst.mu.Unlock()
	inst.stdout.reset()
	inst.stderr.reset()
}

func (inst *instance) end() {
	inst.mu.Lock()
	inst.done = nil
	inst.span = nil
	inst.mu.Unlock()
}

// spanner returns how to start a span in the call being served, or nil.
func (inst *instance) spanner() func(string, ...slog.Attr) Span {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.span
}

func (inst *instance) close() { inst.g.close() }
