package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/wasmbin"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
)

// interruptMode is how the calls of a native module are stopped when their
// context ends.
type interruptMode int

const (
	// interruptPoll, the default, rewrites the guest at load time
	// (looppoll) so that every loop header polls a global the host sets
	// when the call's context ends, and turns wazero's close-on-done off.
	// A Go guest's call costs about a quarter of what it does under
	// close-on-done, which leaves native code at every loop iteration.
	interruptPoll interruptMode = iota
	// interruptCloseOnDone is wazero's CloseOnContextDone alone: the
	// fallback for a module the rewriter refuses, and what the extism
	// runtime always uses.
	interruptCloseOnDone
)

// compileNative compiles wasm for the native runtime in a new runtime
// configured by rc. With interruptPoll it compiles the instrumented module
// with close-on-done off, and reports poll; when the rewriter refuses the
// module, or wazero refuses its output while accepting the original, it
// logs why and compiles the original with close-on-done on.
//
// The compilation cache needs no key of ours: wazero keys its entries by a
// hash of the bytes it compiles plus the close-on-done flag, and the
// instrumented bytes carry the rewriter's version in their export names.
func compileNative(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, intr interruptMode, log *slog.Logger) (wazero.Runtime, wazero.CompiledModule, bool, error) {
	if intr == interruptPoll {
		start := time.Now()
		// A module compiled before through the cache kept what it
		// compiled (prepared.go).
		use := preparedIn(ctx)
		k, fromKept := keptIn(ctx) // Engine.LoadKept read it: wasm is it
		code := k.code
		if !fromKept {
			var free func()
			code, free = use.readPrepared(log)
			defer free() // after CompileModule, which copies what it keeps
		}
		kept := code != nil
		var st looppoll.Stats
		var err error
		if !kept {
			wasm = wasmbin.MergeData(wasm)
			code, st, err = looppoll.Instrument(wasm)
		}
		if err == nil {
			rt := wazero.NewRuntimeWithConfig(ctx, rc.WithCloseOnContextDone(false))
			cm, cerr := rt.CompileModule(ctx, code)
			if cerr == nil {
				if !kept {
					use.savePrepared(code, log)
				}
				log.Debug("loop poll", "loops", st.Loops, "prepared", kept, "dur", time.Since(start))
				return rt, cm, true, nil
			}
			rt.Close(ctx)
			if kept {
				// This build compiled it before: prepare it again (and
				// keep that, unless the bad entry stays).
				file := filepath.Join(use.dir, use.c.prepared)
				log.Warn("prepared module does not compile: removed, preparing the module again", "file", file, "err", cerr)
				if cachefile.Remove(file) != nil {
					ctx = withPrepared(ctx, nil)
				}
				if fromKept {
					return nil, nil, false, cerr // LoadKept's caller prepares the bytes
				}
				return compileNative(ctx, rc, wasm, intr, log)
			}
			if isWriteFault(cerr) || isEntryFault(cerr) {
				return nil, nil, false, cerr // the cache's fault: Engine.load deals with it
			}
			err = fmt.Errorf("instrumented module does not compile: %w", cerr)
		}
		rt := wazero.NewRuntimeWithConfig(ctx, rc)
		cm, cerr := rt.CompileModule(ctx, wasm)
		if cerr != nil {
			rt.Close(ctx)
			return nil, nil, false, cerr
		}
		log.Warn("loop poll unavailable: timeouts use wazero's close-on-done, which costs ~20 ns per loop iteration", "err", err)
		return rt, cm, false, nil
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	cm, err := rt.CompileModule(ctx, wasmbin.MergeData(wasm))
	if err != nil {
		rt.Close(ctx)
		return nil, nil, false, err
	}
	return rt, cm, false, nil
}

// poll is one instance's side of the loop poll: the two globals the
// rewriter added to each of its modules (one for a core module, one per
// core instance for a component), and whether a call is running that its
// context's end may interrupt. Only an armed call is ever interrupted, so
// an idle instance's globals are never touched.
type poll struct {
	ctr, intr []api.MutableGlobal
	onDone    func() // interrupt(false), made once: arm allocates no closure

	mu     sync.Mutex
	armed  bool
	fired  bool // the armed call was interrupted
	closed bool // by the backend's close, not by its context
	stop   func() bool
}

// newPoll finds the globals of instrumented module instances.
func newPoll(mods ...api.Module) (*poll, error) {
	p := &poll{}
	for _, mod := range mods {
		ctr, ok1 := mod.ExportedGlobal(looppoll.CounterExport).(api.MutableGlobal)
		intr, ok2 := mod.ExportedGlobal(looppoll.InterruptExport).(api.MutableGlobal)
		if !ok1 || !ok2 {
			return nil, errors.New("instrumented instance lacks the loop poll's globals")
		}
		p.ctr, p.intr = append(p.ctr, ctr), append(p.intr, intr)
	}
	p.onDone = func() { p.interrupt(false) }
	return p, nil
}

// arm lets the end of ctx, the call's own (its deadline, or the caller's
// cancellation), interrupt the call about to run. A callClock, the
// instance's, interrupts it itself; any other context gets an AfterFunc.
func (p *poll) arm(ctx context.Context) {
	p.mu.Lock()
	p.armed, p.fired, p.closed = true, false, false
	p.mu.Unlock()
	if c, ok := ctx.(*callClock); ok {
		c.watch(p.onDone)
		return
	}
	p.stop = context.AfterFunc(ctx, p.onDone)
}

// disarm ends the call bounded by ctx and returns why it was interrupted,
// as the exit code close-on-done would give, or 0. After it returns,
// nothing sets the globals any more.
func (p *poll) disarm(ctx context.Context) uint32 {
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
	switch {
	case !p.fired:
		return 0
	case p.closed:
		return exitCodeClosed
	case errors.Is(ctx.Err(), context.Canceled):
		return sys.ExitCodeContextCanceled
	default:
		return sys.ExitCodeDeadlineExceeded
	}
}

// livePolls are a backend's instrumented instances. Closing a runtime does
// not stop an instrumented guest, so the backend's close interrupts them.
type livePolls struct {
	mu   sync.Mutex
	live map[*poll]struct{}
}

func (l *livePolls) add(p *poll) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live == nil {
		l.live = make(map[*poll]struct{})
	}
	l.live[p] = struct{}{}
}

func (l *livePolls) remove(p *poll) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.live, p)
}

// interruptAll stops every call running, as closed.
func (l *livePolls) interruptAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.live {
		p.interrupt(true)
	}
}

// runStart runs an instance's start functions, which looppoll moved out
// of instantiation (looppoll.StartExport), by calling run with p armed:
// the end of ctx, the instance's time limit, stops one that never returns.
func runStart(ctx context.Context, p *poll, run func() error) error {
	p.arm(ctx)
	err := run()
	if code := p.disarm(ctx); code != 0 {
		err = interruptedError(code, err)
	}
	if err != nil {
		return fmt.Errorf("start function: %w", err)
	}
	return nil
}

// exitCodeClosed says the call was interrupted because the module was
// closed under it (Module.Close ran out of patience).
const exitCodeClosed = 1

// interrupt makes the armed call trap at its next loop header: $intr=1
// makes the next poll trap, $ctr=0 makes the next loop header poll. Native
// code reads the globals without synchronisation; the stores are aligned
// 8-byte writes, which the guest sees whole. closed says the backend is
// closing.
func (p *poll) interrupt(closed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed || p.fired {
		return
	}
	p.fired, p.closed = true, closed
	for i := range p.ctr {
		p.intr[i].Set(1)
		p.ctr[i].Set(0)
	}
}

// interruptedError is what a call interrupted for code returns in place of
// the poll's unreachable trap: exactly what close-on-done returns, so the
// fault is classified the same way.
func interruptedError(code uint32, err error) error {
	if err == nil {
		return nil
	}
	if code == exitCodeClosed {
		return fmt.Errorf("module closed during the call: %w", err)
	}
	return sys.NewExitError(code)
}
