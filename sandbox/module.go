package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// Module is one loaded Wasm module with its pool of instances. Calls run in
// parallel, one per instance, up to Limits.Instances; further callers wait
// for a free instance. A Module is safe for concurrent use.
type Module struct {
	e       *Engine
	name    string
	mc      wazero.ModuleConfig
	mounts  []mounted // traced instances mount these again (tracedFSConfig)
	lim     Limits
	sigs    map[string]signature
	exports []string
	log     *slog.Logger

	sem     chan struct{} // one token per running call
	closing chan struct{}
	calls   sync.WaitGroup // calls admitted before Close

	mu   sync.Mutex
	be   backend     // what new instances are made of
	idle []*instance // least recently used first, all of be
	live int
	// The tiers (tier.go): while interpreted, be is the interpreter's and
	// the compiler runs in the background until stopCompile; after the
	// swap, old is the interpreter's backend while oldBusy of its
	// instances still serve calls, or, with keepOld (Limits.KeepsState),
	// still live: they hold the plugin's state and stay pooled.
	interpreted bool
	stopCompile context.CancelFunc
	compileDone chan struct{} // closed when the background compile ends
	old         backend
	oldBusy     int
	keepOld     bool

	closed      bool
	shrinkTimer *time.Timer // pending shrink, while more than one instance idles
	killed      atomic.Bool // Close stopped calls still running

	created, discarded, total, failed atomic.Uint64
	served                            atomic.Uint64 // calls other than reads of its lists (tier.go)
}

// Stats are counters of a Module.
type Stats struct {
	Instances int    // live instances, idle or busy
	Idle      int    // instances waiting for a call
	Created   uint64 // instances created since Load
	Discarded uint64 // instances thrown away after a failure
	Calls     uint64 // calls that reached an instance
	Failures  uint64 // calls that returned an error
	// Interpreted says calls run on wazero's interpreter: the module's
	// compiled code is not ready (EngineOptions.InterpretUntilCompiled),
	// or its instances keep state and stay there (Limits.KeepsState).
	Interpreted bool
}

func newModule(e *Engine, name string, be backend, mc wazero.ModuleConfig,
	lim Limits, sigs map[string]signature, log *slog.Logger) *Module {
	exports := make([]string, 0, len(sigs))
	for n := range sigs {
		exports = append(exports, n)
	}
	slices.Sort(exports)
	return &Module{
		e: e, name: name, be: be, mc: mc, lim: lim, sigs: sigs, exports: exports, log: log,
		sem:     make(chan struct{}, lim.Instances),
		closing: make(chan struct{}),
	}
}

// Name returns the name given to Load.
func (m *Module) Name() string { return m.name }

// Exports returns the sorted names of the functions the module exports.
func (m *Module) Exports() []string { return slices.Clone(m.exports) }

// HasExport reports whether the module exports a function called name.
func (m *Module) HasExport(name string) bool {
	_, ok := m.sigs[name]
	return ok
}

// Limits returns the module's limits with defaults filled in.
func (m *Module) Limits() Limits {
	lim := m.lim
	lim.AllowedHosts = slices.Clone(lim.AllowedHosts)
	lim.AllowedPaths = slices.Clone(lim.AllowedPaths)
	lim.MayRequestPaths = slices.Clone(lim.MayRequestPaths)
	lim.Env = cloneMap(lim.Env)
	lim.Config = cloneMap(lim.Config)
	return lim
}

// Stats returns the module's counters.
func (m *Module) Stats() Stats {
	m.mu.Lock()
	live, idle, interpreted := m.live, len(m.idle), m.interpreted || m.keepOld
	m.mu.Unlock()
	return Stats{
		Instances: live, Idle: idle, Interpreted: interpreted,
		Created: m.created.Load(), Discarded: m.discarded.Load(),
		Calls: m.total.Load(), Failures: m.failed.Load(),
	}
}

// Call runs the Extism export with input and returns its output. Every
// error is a *CallError. After a failure other than KindGuestError,
// KindBadOutput, KindBadInput and KindMissingExport the instance is thrown
// away; the next call gets a fresh one. Other calls are unaffected.
func (m *Module) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	sig, ok := m.sigs[export]
	if !ok && m.component() != nil {
		return nil, m.fail(export, KindMissingExport, "a component exports no Extism function: ask it through its Guest (NewGuest)", nil)
	}
	if !ok {
		return nil, m.fail(export, KindMissingExport, "", nil)
	}
	if len(sig.params) != 0 || len(sig.results) > 1 || (len(sig.results) == 1 && sig.results[0] != api.ValueTypeI32) {
		return nil, m.fail(export, KindMissingExport, "export is not an Extism function: its type is "+sig.String(), nil)
	}
	if len(input) > m.lim.MaxInputBytes {
		return nil, m.fail(export, KindBadInput, fmt.Sprintf("%d bytes, limit %d", len(input), m.lim.MaxInputBytes), nil)
	}
	out, _, err := m.run(ctx, export, callInput{bytes: input}, false)
	return out, err
}

// CallI32 calls a plain Wasm export that takes no parameters and returns an
// i32, such as abi.ExportABIVersion. Every error is a *CallError.
func (m *Module) CallI32(ctx context.Context, export string) (int32, error) {
	sig, ok := m.sigs[export]
	if !ok {
		return 0, m.fail(export, KindMissingExport, "", nil)
	}
	if len(sig.params) != 0 || len(sig.results) != 1 || sig.results[0] != api.ValueTypeI32 {
		return 0, m.fail(export, KindMissingExport, "export type is "+sig.String()+", want () -> i32", nil)
	}
	_, rc, err := m.run(ctx, export, callInput{}, true)
	return int32(rc), err
}

// run serves one call on a pooled instance. plain means rc is the result,
// not an Extism status.
func (m *Module) run(ctx context.Context, export string, input callInput, plain bool) ([]byte, uint32, error) {
	if tr := m.e.tr; tr != nil {
		ctx, sp := startCall(ctx, tr, m.name, export)
		out, rc, err := m.runOnce(ctx, export, input, plain)
		endCall(sp, err)
		return out, rc, err
	}
	return m.runOnce(ctx, export, input, plain)
}

// runOnce is run without a span.
func (m *Module) runOnce(ctx context.Context, export string, input callInput, plain bool) ([]byte, uint32, error) {
	for attempt := 0; ; attempt++ {
		inst, err := m.acquire(ctx)
		if err != nil {
			switch {
			case errors.Is(err, errModuleClosed):
				return nil, 0, m.fail(export, KindClosed, "", nil)
			case ctx.Err() != nil:
				return nil, 0, m.fail(export, KindCanceled, "while waiting for a free instance", context.Cause(ctx))
			default:
				return nil, 0, m.fail(export, KindTrap, err.Error(), err)
			}
		}
		var callCtx context.Context
		var cancel context.CancelFunc
		if c := inst.clock; c != nil {
			c.start(ctx, m.lim.Timeout, m.lim.CancelGrace)
			callCtx, cancel = c, c.finish
		} else {
			callCtx, cancel = withGrace(ctx, m.lim.Timeout, m.lim.CancelGrace)
		}
		inst.begin(callCtx)
		rc, out, err := input.call(callCtx, inst.g, export)
		inst.end()
		if err != nil && err.Error() == errModuleClosed.Error() && !m.killed.Load() && attempt == 0 {
			// The guest called proc_exit(0) during its previous call, which
			// go-sdk reports as success. Nothing ran this time, so another
			// instance may safely serve the call.
			cancel()
			m.put(inst, false)
			continue
		}
		m.total.Add(1)
		if !listExports[export] {
			m.served.Add(1)
		}
		ce := m.classify(ctx, callCtx, inst, export, rc, out, err, plain)
		// A guest that returned after the call's own deadline (the
		// interrupt had not reached it: it was in a host function that
		// gave up at the deadline, say) overran its time all the same,
		// and its instance, which the interrupt may yet stop, goes as a
		// timed-out one does.
		if ce == nil && callCtx.Err() != nil && ctx.Err() == nil {
			ce = m.contextError(ctx, export, context.DeadlineExceeded)
		}
		told, stopped := cancelState(callCtx)
		cancel()
		keep := ce == nil || ce.Kind == KindGuestError || ce.Kind == KindBadOutput
		if told {
			ce = m.afterCancel(ctx, export, ce, keep, stopped)
		} else if !keep {
			m.log.Warn("instance discarded", "export", export, "kind", ce.Kind.String(), "err", ce.Detail)
		}
		m.put(inst, keep)
		if ce != nil {
			m.failed.Add(1)
			return nil, rc, ce
		}
		return out, rc, nil
	}
}

var errModuleClosed = errors.New("module is closed")

// acquire waits for a free slot, then takes an idle instance or creates one.
func (m *Module) acquire(ctx context.Context) (*instance, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errModuleClosed
	}
	m.calls.Add(1)
	m.mu.Unlock()
	select {
	case m.sem <- struct{}{}: // a free slot: no need to ask for ctx.Done
	default:
		select {
		case m.sem <- struct{}{}:
		case <-ctx.Done():
			m.calls.Done()
			return nil, ctx.Err()
		case <-m.closing:
			m.calls.Done()
			return nil, errModuleClosed
		}
	}
	if err := ctx.Err(); err != nil {
		// select chose the slot at random; do not spend an instance on a
		// call that is already over.
		<-m.sem
		m.calls.Done()
		return nil, err
	}
	m.mu.Lock()
	if n := len(m.idle); n > 0 {
		inst := m.idle[n-1]
		m.idle = m.idle[:n-1]
		m.mu.Unlock()
		return inst, nil
	}
	m.live++ // holding a slot, so live stays within the pool size
	be := m.be
	m.mu.Unlock()
	inst, err := m.newInstance(ctx, be)
	if err != nil {
		m.mu.Lock()
		retired := m.release(be)
		m.mu.Unlock()
		if retired != nil {
			retired.Close(context.Background(), true)
		}
		<-m.sem
		m.calls.Done()
		return nil, err
	}
	return inst, nil
}

// put returns inst to the pool, or closes it.
func (m *Module) put(inst *instance, keep bool) {
	m.mu.Lock()
	// An instance of a retired backend (the interpreter's, after the
	// swap) is not pooled, unless it holds the plugin's state.
	pooled := keep && !m.closed && (inst.be == m.be || m.keepOld && inst.be == m.old)
	var retired backend
	if pooled {
		inst.lastUse = time.Now()
		m.idle = append(m.idle, inst)
		if len(m.idle) > 1 && m.shrinkTimer == nil {
			m.shrinkTimer = time.AfterFunc(idleTTL, func() { m.shrink(time.Now()) })
		}
	} else {
		retired = m.release(inst.be)
	}
	m.mu.Unlock()
	if !pooled {
		inst.close()
		if !keep {
			m.discarded.Add(1)
		}
	}
	if retired != nil {
		retired.Close(context.Background(), true)
	}
	<-m.sem
	m.calls.Done()
}

// idleTTL is how long an instance beyond the first may stay idle before
// the pool closes it: a burst of parallel calls grows the pool to
// Limits.Instances, and the memory (~5 MB per Go instance) comes back once
// the burst is over.
const idleTTL = 30 * time.Second

// shrink closes the instances idle since before now-idleTTL, keeping one
// warm, and schedules itself again while more than one instance idles.
func (m *Module) shrink(now time.Time) {
	m.mu.Lock()
	m.shrinkTimer = nil
	var old []*instance
	var retired backend
	for len(m.idle) > 1 && now.Sub(m.idle[0].lastUse) >= idleTTL {
		old = append(old, m.idle[0])
		if r := m.release(m.idle[0].be); r != nil {
			retired = r
		}
		m.idle = m.idle[1:]
	}
	if len(m.idle) > 1 && !m.closed {
		m.shrinkTimer = time.AfterFunc(idleTTL-now.Sub(m.idle[0].lastUse), func() { m.shrink(time.Now()) })
	}
	m.mu.Unlock()
	for _, inst := range old {
		inst.close()
	}
	if retired != nil {
		retired.Close(context.Background(), true)
	}
}

// warm creates the first instance and, when the module exports
// abi.ExportABIVersion, calls it so the reactor's _initialize runs now.
func (m *Module) warm(ctx context.Context) error {
	if sig, ok := m.sigs[abi.ExportABIVersion]; ok && len(sig.params) == 0 && len(sig.results) == 1 {
		if _, err := m.CallI32(ctx, abi.ExportABIVersion); err != nil {
			return fmt.Errorf("warm-up call: %w", err)
		}
		return nil
	}
	inst, err := m.acquire(ctx)
	if err != nil {
		return err
	}
	m.put(inst, true)
	return nil
}

// Close stops new calls, waits for calls in flight (bounded by ctx), then
// closes every instance; calls still running when ctx ends are stopped and
// fail with KindClosed. Calls after Close fail with KindClosed.
func (m *Module) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.closing)
	if m.shrinkTimer != nil {
		m.shrinkTimer.Stop()
		m.shrinkTimer = nil
	}
	m.mu.Unlock()

	done := make(chan struct{})
	go func() { // exits when the last admitted call returns
		m.calls.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("sandbox: %s: close: calls still running: %w", m.name, ctx.Err())
	}
	m.mu.Lock()
	idle := m.idle
	m.idle = nil
	m.live -= len(idle)
	be, old := m.be, m.old
	m.old = nil // calls still running on it do not retire it again
	m.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
	if err != nil {
		m.killed.Store(true)
	}
	// Stops anything still running; only once nothing runs the module's
	// code can it be released.
	cerr := be.Close(context.Background(), err == nil)
	if old != nil {
		cerr = errors.Join(cerr, old.Close(context.Background(), err == nil))
	}
	m.e.forget(m)
	if cerr != nil {
		cerr = fmt.Errorf("sandbox: %s: close: %w", m.name, cerr)
	}
	return errors.Join(err, cerr)
}

func (m *Module) fail(export string, kind Kind, detail string, err error) *CallError {
	return &CallError{Module: m.name, Export: export, Kind: kind, Detail: detail, Err: err}
}
