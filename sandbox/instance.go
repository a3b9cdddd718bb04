package sandbox

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"path"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcphost/mcphost/sandbox/internal/rootfs"
)

// instance is one guest instance on the module's runtime, with its own
// captured stdout and stderr. It serves one call at a time.
type instance struct {
	be     backend // what it is an instance of
	g      guest
	stdout *lineWriter
	stderr *lineWriter

	lastUse time.Time // when it went back to the pool; guarded by Module.mu

	// clock is the context of its calls when the loop poll stops its
	// guest (callClock); nil under close-on-done.
	clock *callClock

	mu sync.Mutex
	// call is the context of the call being served (nil outside one),
	// for the host functions that wait: nanosleep asks for its Done
	// channel only when a guest sleeps, which keeps a callClock from
	// making one per call, and gate asks consent with it.
	call context.Context
	// span starts a span in the call being served, for traced file
	// opens (tracedFS); nil when the call is not traced.
	span   startSpan
	traced bool // its mounts are tracedFS
	// answers are the call's decisions on gated mounts (gate), made on
	// the first and emptied after each call.
	answers map[Reach]bool
	// handles are the files the call opened under gated mounts: an
	// answer stands for its call only, so end revokes them.
	handles rootfs.Handles

	plugin  string
	consent Consent
	log     *slog.Logger
}

// newInstance instantiates the module's backend be once more. The only
// guest code it runs is the module's start functions (a core module's
// start section, a component's core start functions), bounded by the
// plugin's call timeout: one that never returns fails the instance, and
// the call or load that needed it. A reactor's _initialize runs on the
// instance's first call, within that call's timeout.
func (m *Module) newInstance(ctx context.Context, be backend) (*instance, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, m.lim.Timeout)
	defer cancel()
	inst := &instance{
		plugin:  m.name,
		consent: m.lim.Consent,
		log:     m.log,
		be:      be,
		stdout:  newLineWriter(m.log, "stdout", false),
		stderr:  newLineWriter(m.log, "stderr", true),
	}
	cfg := m.mc.WithStdout(inst.stdout).WithStderr(inst.stderr).WithNanosleep(inst.nanosleep)
	var g guest
	var err error
	if cb, ok := be.(*componentBackend); ok {
		g, err = cb.instantiateIO(ctx, inst.stdout, inst.stderr, inst)
	} else {
		if len(m.mounts) > 0 {
			cfg = cfg.WithFSConfig(instanceFSConfig(m.mounts, inst))
			inst.traced = m.e.tr != nil
		}
		g, err = be.Instantiate(ctx, cfg)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
			return nil, fmt.Errorf("new instance: start function did not return within the plugin's timeout (%s; raise timeout or fix the guest's start): %w", m.lim.Timeout, err)
		}
		return nil, fmt.Errorf("new instance: %w", err)
	}
	inst.g = g
	if guestPolled(g) {
		inst.clock = &callClock{}
	}
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
	call := inst.call
	inst.mu.Unlock()
	var done <-chan struct{}
	if call != nil {
		done = call.Done()
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// begin prepares the instance for a call bounded by ctx.
func (inst *instance) begin(ctx context.Context) {
	var span startSpan
	if inst.traced {
		span = spanIn(ctx)
	}
	inst.mu.Lock()
	inst.call = ctx
	inst.span = span
	inst.mu.Unlock()
	inst.stdout.reset()
	inst.stderr.reset()
}

func (inst *instance) end() {
	if n := inst.handles.Expire(); n > 0 {
		inst.log.Debug("allowed paths: files the call left open under may_request_paths closed; later uses fail", "files", n,
			"key", "may_request_paths")
	}
	inst.mu.Lock()
	inst.call = nil
	inst.span = nil
	clear(inst.answers)
	inst.mu.Unlock()
}

// gate is the instance's gate for the may_request_paths mount of host
// directory dir. Within a call, the first read and the first write ask
// Consent and the answer stands for the rest of the call (a write
// allowed also allows reading), and so do the files opened under it: end
// revokes them (rootfs.Handles); outside a call, or without Consent,
// everything is refused. A refusal is EACCES for the guest and a
// warning, naming the key that would allow it, in the log.
func (inst *instance) gate(dir string) rootfs.Gate {
	return func(write bool) experimentalsys.Errno {
		r := Reach{Plugin: inst.plugin, Path: dir, Write: write}
		inst.mu.Lock()
		allowed, asked := inst.answers[r]
		if !asked && !write && inst.answers[Reach{Plugin: inst.plugin, Path: dir, Write: true}] {
			allowed, asked = true, true
		}
		call := inst.call
		inst.mu.Unlock()
		switch {
		case asked && allowed:
			return 0
		case asked:
			return experimentalsys.EACCES
		}
		access := "read"
		if write {
			access = "write"
		}
		var err error
		if call == nil || inst.consent == nil {
			err = fmt.Errorf("may_request_paths names it, but no person can be asked here (mcphost serve asks a client that declares elicitation); add %q to allowed_paths in [[plugin]] %s", dir, inst.plugin)
		} else {
			err = inst.consent.Allow(call, r)
		}
		inst.mu.Lock()
		if inst.call != nil {
			if inst.answers == nil {
				inst.answers = map[Reach]bool{}
			}
			inst.answers[r] = err == nil
		}
		inst.mu.Unlock()
		if err != nil {
			inst.log.Warn("allowed paths: refused", "path", dir, "access", access, "reason", err,
				"key", "allowed_paths")
			return experimentalsys.EACCES
		}
		return 0
	}
}

// spanner returns how to start a span in the call being served, or nil.
func (inst *instance) spanner() startSpan {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.span
}

func (inst *instance) close() { inst.g.Close() }

// guestPolled says the loop poll stops g's calls.
func guestPolled(g guest) bool {
	switch g := g.(type) {
	case *nativeGuest:
		return g.poll != nil
	case *componentGuest:
		return g.poll != nil
	}
	return false
}

// instanceFSConfig mounts ms again for one instance: gated mounts behind
// the instance's gate (instance.gate), and each behind a tracedFS that
// gives every file open of inst's calls a span when they are traced.
func instanceFSConfig(ms []mounted, inst *instance) wazero.FSConfig {
	cfg := wazero.NewFSConfig()
	for _, m := range ms {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(tracedFS{FS: m.with(inst.gate(m.host), &inst.handles), inst: inst, guest: m.guest}, m.guest)
	}
	return cfg
}

// tracedFS is a mount whose opens are spans of the call being served.
// wazero's FS methods take no context, so the instance holds how to start
// a span in its current call (instance.begin).
type tracedFS struct {
	experimentalsys.FS
	inst  *instance
	guest string
}

func (f tracedFS) OpenFile(p string, flag experimentalsys.Oflag, perm iofs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	start := f.inst.spanner()
	if start == nil {
		return f.FS.OpenFile(p, flag, perm)
	}
	write := flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY|experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0
	sp := start("open", attribute.String("file.path", path.Join(f.guest, p)), attribute.Bool("mcphost.fs.write", write))
	file, errno := f.FS.OpenFile(p, flag, perm)
	var err error
	if errno != 0 {
		sp.SetAttributes(attribute.String("error.type", errno.Error()))
		err = errno
	}
	endSpan(sp, err)
	return file, errno
}
