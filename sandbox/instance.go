package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
)

// instance is one go-sdk Plugin (guest module plus its own Extism kernel)
// with its own captured stdout and stderr. It serves one call at a time.
type instance struct {
	p      *extism.Plugin
	stdout *lineWriter
	stderr *lineWriter

	mu   sync.Mutex
	done <-chan struct{} // Done of the call being served
}

// newInstance instantiates the module once more. It runs no guest code:
// go-sdk runs a reactor's _initialize on the instance's first call.
func (m *Module) newInstance(ctx context.Context) (*instance, error) {
	inst := &instance{
		stdout: newLineWriter(m.log, "stdout", false),
		stderr: newLineWriter(m.log, "stderr", true),
	}
	cfg := m.mc.WithStdout(inst.stdout).WithStderr(inst.stderr).WithNanosleep(inst.nanosleep)
	guardWASIOutput(m.log)
	p, err := m.cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: cfg})
	if err != nil {
		return nil, fmt.Errorf("new instance: %w", err)
	}
	log := m.log
	p.SetLogger(func(level extism.LogLevel, msg string) {
		log.LogAttrs(context.Background(), slogLevel(level), "guest log", slog.String("text", msg))
	})
	inst.p = p
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

func (inst *instance) close() {
	// Background: closing must not be skipped because a call's ctx ended.
	inst.p.Close(context.Background())
}

func slogLevel(l extism.LogLevel) slog.Level {
	switch l {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		return slog.LevelDebug
	case extism.LogLevelInfo:
		return slog.LevelInfo
	case extism.LogLevelWarn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
