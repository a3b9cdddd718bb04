package sandbox

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// instance is one guest instance on the module's runtime, with its own
// captured stdout and stderr. It serves one call at a time.
type instance struct {
	g      guest
	stdout *lineWriter
	stderr *lineWriter

	lastUse time.Time // when it went back to the pool; guarded by Module.mu

	mu   sync.Mutex
	done <-chan struct{} // Done of the call being served
}

// newInstance instantiates the module once more. It runs no guest code: a
// reactor's _initialize runs on the instance's first call.
func (m *Module) newInstance(ctx context.Context) (*instance, error) {
	inst := &instance{
		stdout: newLineWriter(m.log, "stdout", false),
		stderr: newLineWriter(m.log, "stderr", true),
	}
	cfg := m.mc.WithStdout(inst.stdout).WithStderr(inst.stderr).WithNanosleep(inst.nanosleep)
	var g guest
	var err error
	if cb, ok := m.be.(*componentBackend); ok {
		g, err = cb.instantiateIO(ctx, inst.stdout, inst.stderr)
	} else {
		g, err = m.be.instantiate(ctx, cfg)
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
	inst.mu.Lock()
	inst.done = ctx.Done()
	inst.mu.Unlock()
	inst.stdout.reset()
	inst.stderr.reset()
}

func (inst *instance) end() {
	inst.mu.Lock()
	inst.done = nil
	inst.mu.Unlock()
}

func (inst *instance) close() { inst.g.close() }
