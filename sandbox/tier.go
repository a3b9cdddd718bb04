package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/mcphost/mcphost/abi"
)

// Tiers. wazero's optimizing compiler needs ~1.5 s for a 4 MB Go guest
// (most of an author's save-to-served time); its interpreter compiles the
// same module in ~0.15 s, initialises the Go runtime in ~30 ms and runs
// calls ~13× slower. With EngineOptions.InterpretUntilCompiled, a core
// module whose compiled code is not in the cache loads on the interpreter
// (Engine.load) and this file compiles it in the background, then swaps:
//
//   - the compile runs on every core (wazero's compilation workers), which
//     also lets a newer load of the same module (a save) stop it: a worker
//     checks its context between functions; otherwise it finishes, even
//     after the module closed, so that its code reaches the cache;
//   - compiles take turns (compileTurn): one per CPU at a time, only
//     while no load runs, an open module's before a closed one's (a
//     plugin listed on a first start and closed, whose code is compiled
//     for its first call); a load stops a closed module's compile, which
//     runs again at its next turn;
//   - the compiled code gets one instance, warmed like Load's (its
//     reactor's _initialize runs), before anything moves to it;
//   - the swap makes it the module's backend: idle interpreter instances
//     close, calls running on the interpreter finish there and their
//     instances close when they come back, and the interpreter's runtime
//     closes with the last of them. No call is refused or run twice.
//
// A guest's state lives in its instance and cannot move between engines.
// So a module that keeps state (Limits.KeepsState) whose instances have
// served a call keeps them: they stay on the interpreter, pooled, until
// one fails (its replacement is compiled code, as a fault's replacement
// starts over anyway) or the module closes (a reload, whose next load
// finds the code in the cache). Only where the module is declared
// stateless, or nothing but its lists was read (listExports), is the
// swap invisible, and it happens. The log line says which, with the
// calls the interpreter served.
//
// When the compile or the warm-up fails, the module stays on the
// interpreter, slower but correct, and the failure is logged.

// compileWorkers is how many goroutines compile in the background: at
// least two, since only the parallel compiler can be stopped.
var compileWorkers = max(2, runtime.NumCPU())

// compileTurns is how many background compiles run at once (compileTurn):
// one per CPU. Each has compileWorkers, but its decoding, validation,
// loop-poll rewrite and writing to the cache run on one goroutine: 100
// compiles of a 4 MB Go guest on 2 shared, busy CPUs took 211 s one at a
// time, and ~115 s all at once.
var compileTurns = max(1, runtime.NumCPU())

// hasCode reports whether compiled code for u's module is on disk, so
// that loading it reads rather than compiles. It looks for any entry of
// the module's directory: one compiled under other settings (the loop
// poll refused, another wazero) makes Load compile in the foreground, as
// without tiers.
func (u *cacheUse) hasCode() bool {
	return u.cache != nil && slices.ContainsFunc(u.entries(), func(f string) bool { return !isPrepared(filepath.Base(f)) })
}

// startCompile starts the background compile of m, which was loaded on
// the interpreter, through use (which it releases, or hands to m at the
// swap). The caller holds e.mu and has checked that e is open, so that
// Engine.Close waits for it; m is not yet shared.
func (m *Module) startCompile(use *cacheUse, rc wazero.RuntimeConfig, wasm []byte, newBE newBackend) {
	ctx, cancel := context.WithCancel(context.Background())
	m.interpreted = true
	m.stopCompile = cancel
	m.compileDone = make(chan struct{})
	m.e.compiling.Add(1)
	m.e.running.Add(1)
	m.e.inCompile[m] = m.name
	go m.compileInBackground(ctx, cancel, use, rc, wasm, newBE) // exits when the compile ends, or a newer load stops it
}

// supersede stops the background compiles of the modules other than m
// loaded under m's name: m's code replaces theirs (a save), so theirs
// would be compiled for nothing. Until they close they keep serving on
// the interpreter. A module closed for any other reason (a plugin
// removed, the Engine closing) finishes its compile, so that its code
// reaches the cache.
func (e *Engine) supersede(m *Module) {
	e.mu.Lock()
	var older []*Module
	for o := range e.modules {
		if o != m && o.name == m.name {
			older = append(older, o)
		}
	}
	e.mu.Unlock()
	for _, o := range older {
		o.mu.Lock()
		if o.stopCompile != nil {
			o.stopCompile()
			o.log.Debug("background compile stopped: a newer load of the module replaces it")
		}
		o.mu.Unlock()
	}
}

func (m *Module) compileInBackground(ctx context.Context, cancel context.CancelFunc, use *cacheUse,
	rc wazero.RuntimeConfig, wasm []byte, newBE newBackend) {
	defer m.e.compiling.Done()
	defer m.e.running.Add(-1)
	defer func() {
		m.e.mu.Lock()
		delete(m.e.inCompile, m)
		m.e.mu.Unlock()
	}()
	defer close(m.compileDone)
	defer cancel()
	if hold := m.e.holdCompile; hold != nil {
		hold(ctx)
	}
	var be backend
	var err error
	var start time.Time
	var compiled time.Duration
	for {
		var turn context.Context
		if turn, err = m.e.compileTurn(ctx, m); err != nil {
			break
		}
		if hook := m.e.turnTaken; hook != nil {
			hook(turn)
		}
		start = time.Now()
		be, _, use, err = m.e.compile(experimental.WithCompilationWorkers(turn, compileWorkers),
			use, rc, wasm, m.name, m.lim, m.log, newBE)
		compiled = time.Since(start)
		if err != nil && turn.Err() != nil && ctx.Err() == nil {
			m.e.endTurn(m)
			m.log.Debug("background compile stopped for a load; it starts again when the loads end", "after", compiled.Round(time.Millisecond))
			continue
		}
		defer m.e.endTurn(m)
		break
	}
	var inst *instance
	if err == nil {
		use.record()
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed { // the code is in the cache: nothing else to do
			be.Close(context.Background(), true)
			use.close(context.Background())
			m.log.Info("compile finished and stored in the cache after the module closed", "compile", compiled.Round(time.Millisecond))
			return
		}
		if inst, err = m.warmOn(ctx, be); err != nil {
			be.Close(context.Background(), true)
		}
	}
	if err != nil {
		use.close(context.Background())
		if ctx.Err() == nil {
			m.log.Warn("compiled code not ready: calls stay on the interpreter until the plugin reloads", "err", err)
		}
		return
	}
	m.swap(inst, be, use, compiled, time.Since(start))
}

// compileTurn waits, bounded by ctx, for m's turn to compile: until no
// load runs (Engine.Loading) and fewer than e.turns compiles do, and
// while m is closed (listed only, its code compiled for later), until no
// open module's compile waits. It returns the context to compile under,
// which, for a closed module, a load that begins ends (Loading): that
// compile starts again at its next turn, at the cost of what it had done
// (at most one compile, ~1.5 s of CPU for a 4 MB Go guest), rather than
// slowing the load, a client's first call, ~20×. The caller ends the turn
// with endTurn.
//
// A load is what makes a plugin listed or callable; the compiles it
// leaves behind only make later calls faster. With every compile at once
// (the compiler's workers on every core each), the loads of a first start
// on 2 cores took ~20× as long (0.15 s → 3.5 s for a 4 MB Go guest, some
// past their 5 s warm-up timeout), and as many interpreted modules as
// were loading stayed in memory (~95 MB each). Taking turns, the module
// a client calls compiles before those nobody has called.
func (e *Engine) compileTurn(ctx context.Context, m *Module) (turn context.Context, err error) {
	stop := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.turn.Broadcast()
		e.mu.Unlock()
	})
	defer stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		open := !m.isClosing()
		if e.compiles < e.turns && e.loads == 0 && (open || e.openWaiting == 0) {
			e.compiles++
			if open {
				return ctx, nil
			}
			turn, stop := context.WithCancel(ctx)
			e.preempt[m] = stop
			return turn, nil
		}
		if open {
			e.openWaiting++
			e.turn.Broadcast() // the closed modules' compiles wait behind it
		}
		e.turn.Wait()
		if open {
			e.openWaiting--
		}
	}
}

// endTurn ends the turn compileTurn gave m.
func (e *Engine) endTurn(m *Module) {
	e.mu.Lock()
	if stop := e.preempt[m]; stop != nil {
		stop()
		delete(e.preempt, m)
	}
	e.compiles--
	e.turn.Broadcast()
	e.mu.Unlock()
}

// warmOn creates an instance of be and, when the module exports
// abi.ExportABIVersion, calls it as Module.warm does, so the first call
// after the swap does not pay the reactor's _initialize.
func (m *Module) warmOn(ctx context.Context, be backend) (*instance, error) {
	inst, err := m.newInstance(ctx, be)
	if err != nil {
		return nil, err
	}
	if sig, ok := m.sigs[abi.ExportABIVersion]; ok && len(sig.params) == 0 && len(sig.results) == 1 {
		callCtx, cancel := context.WithTimeout(ctx, m.lim.Timeout)
		inst.begin(callCtx)
		_, _, err = inst.g.Call(callCtx, abi.ExportABIVersion, nil)
		inst.end()
		cancel()
		if err != nil {
			inst.close()
			return nil, fmt.Errorf("warm-up call: %w", err)
		}
	}
	return inst, nil
}

// swap makes be, warmed with inst, what m's calls run on, and retires the
// interpreter's backend once none of its instances serves a call. use
// is the cache be was compiled through; m releases it when it closes.
func (m *Module) swap(inst *instance, be backend, use *cacheUse, compiled, total time.Duration) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		inst.close()
		be.Close(context.Background(), true)
		use.close(context.Background())
		return
	}
	old := m.be
	m.be = be
	// A call has run (or runs) on an interpreter instance of a module
	// that keeps state: its instances keep serving.
	stay := m.lim.KeepsState && m.live > 0 && (m.served.Load() > 0 || m.live > len(m.idle))
	var idle []*instance
	var retired backend
	switch {
	case stay:
		m.old, m.oldBusy, m.keepOld = old, m.live, true
	default:
		idle = m.idle
		m.idle = nil
		m.live -= len(idle)
		if m.live == 0 {
			retired = old
		} else {
			m.old, m.oldBusy = old, m.live
		}
	}
	if !stay && m.live < m.lim.Instances {
		inst.lastUse = time.Now()
		m.idle = append(m.idle, inst)
		m.live++
		inst = nil
	}
	m.interpreted = false
	m.stopCompile = nil
	m.e.mu.Lock()
	m.e.modules[m] = use // released by forget, when m closes
	m.e.mu.Unlock()
	calls := m.total.Load()
	m.mu.Unlock()
	for _, i := range idle {
		i.close()
	}
	if inst != nil { // every slot is busy on the interpreter, or its instances stay
		inst.close()
	}
	if retired != nil {
		retired.Close(context.Background(), true)
	}
	args := []any{"compile", compiled.Round(time.Millisecond), "dur", total.Round(time.Millisecond), "interpreted_calls", calls}
	if stay {
		m.log.Info("compiled code ready: the plugin keeps state in its instance, which stays on the interpreter "+
			"(calls ~10x slower) until a reload or a fault replaces it; new instances and the next start use the compiled code", args...)
		return
	}
	m.log.Info("compiled code ready: calls move from the interpreter (no state to keep: the plugin is stateless, or nothing but its lists was read)", args...)
}

// listExports are what the host calls to learn what a plugin offers
// (Load's warm-up, the lists), not to serve a client's request. An
// instance that ran nothing else holds no state a client has seen but
// its lists, which a new instance lists alike: it may move to the
// compiled code.
var listExports = map[string]bool{
	abi.ExportABIVersion: true, abi.ExportListTools: true, abi.ExportListResources: true,
	abi.ExportListResourceTemplates: true, abi.ExportListPrompts: true, abi.ExportDescribe: true,
}

// release accounts for an instance of be that leaves the pool (closed or
// never made) and returns be when it was the retired interpreter's and
// this was its last instance: the caller closes it. m.mu is held.
func (m *Module) release(be backend) backend {
	m.live--
	if be == nil || be != m.old {
		return nil
	}
	m.oldBusy--
	if m.oldBusy > 0 {
		return nil
	}
	m.old, m.keepOld = nil, false
	return be
}

// waitCompiles waits for the background compiles to end, bounded by ctx.
// When the Engine is closing it says which, and how long it waits: each
// compile it waits for is stored in the cache, so that the next start
// loads compiled code instead of interpreting and compiling again.
func (e *Engine) waitCompiles(ctx context.Context) error {
	names := e.compilingNames()
	say := len(names) > 0 && e.isClosed()
	if say {
		args := []any{"plugins", names}
		if d, ok := ctx.Deadline(); ok {
			args = append(args, "up_to", time.Until(d).Round(100*time.Millisecond))
		}
		e.log.Info("finishing compiles for the cache, so that the next start loads compiled code (interrupt to stop now)", args...)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { // exits when the last compile ends
		e.compiling.Wait()
		close(done)
	}()
	select {
	case <-done:
		if say {
			e.log.Info("compiles finished and stored in the cache", "plugins", names, "dur", time.Since(start).Round(time.Millisecond))
		}
		return nil
	case <-ctx.Done():
		left := e.compilingNames()
		if say {
			e.log.Warn("compiles not finished at exit: the next start serves these plugins on the interpreter and compiles them again",
				"plugins", left, "err", context.Cause(ctx))
		}
		return fmt.Errorf("sandbox: compiles of %v still running: %w", left, ctx.Err())
	}
}

// Compiling names the modules compiling in the background, sorted: at
// exit, after Close, the ones whose compile did not finish.
func (e *Engine) Compiling() []string { return e.compilingNames() }

// compilingNames lists the modules compiling in the background, sorted.
func (e *Engine) compilingNames() []string {
	e.mu.Lock()
	names := make([]string, 0, len(e.inCompile))
	for _, n := range e.inCompile {
		names = append(names, n)
	}
	e.mu.Unlock()
	slices.Sort(names)
	return slices.Compact(names)
}

// isClosing reports whether m's Close has begun.
func (m *Module) isClosing() bool {
	select {
	case <-m.closing:
		return true
	default:
		return false
	}
}
