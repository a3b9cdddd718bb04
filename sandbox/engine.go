package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/sandbox/internal/coreruntime"
)

// Engine compiles and runs modules. All modules of an Engine share one
// on-disk compilation cache. An Engine is safe for concurrent use.
type Engine struct {
	log   *slog.Logger
	tr    *tracer // nil: no spans
	dir   string
	cache *compileCache

	// interpret: core modules whose compiled code is not cached start on
	// the interpreter (EngineOptions.InterpretUntilCompiled, tier.go).
	interpret bool
	// compiling counts the background compiles (tier.go); Close waits
	// for them. running is their number.
	compiling sync.WaitGroup
	running   atomic.Int32
	inCompile map[*Module]string // guarded by mu: the modules compiling, by name
	// holdCompile, when set (tests), runs in a background compile before
	// the compiler starts, and may hold it until ctx ends.
	holdCompile func(ctx context.Context)
	// turnTaken, when set (tests), runs in a background compile when it
	// has taken its turn (tier.go), with the context it compiles under.
	turnTaken func(ctx context.Context)

	mu      sync.Mutex
	closed  bool
	modules map[*Module]*cacheUse
	// The background compiles take turns (tier.go): turns (compileTurns)
	// at a time, only while no load runs, those of modules still open
	// first. turn is signalled on every change of what follows.
	turns       int
	turn        *sync.Cond // on mu
	loads       int        // loads running (Loading)
	compiles    int        // background compiles that have a turn
	openWaiting int        // compiles of open modules waiting for a turn
	// preempt stops the compiles of closed modules that have a turn
	// (Loading): each compiles again at its next turn.
	preempt map[*Module]context.CancelFunc
}

// NewEngine opens the compilation cache in opts.CacheDir. It changes no
// process-wide state.
func NewEngine(ctx context.Context, opts EngineOptions) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	dir := opts.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("sandbox: cache dir: %w", err)
		}
		dir = filepath.Join(base, "mcphost", "wazero")
	}
	cache := newCompileCache(dir, log)
	if opts.KeepPrepared {
		cache.prepared = preparedID(executableBuildID())
	}
	// The cache holds native code that will be executed: nobody else may
	// write there.
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("sandbox: cache dir %s is writable by group or others (mode %v)", dir, fi.Mode().Perm())
	}
	e := &Engine{log: log, tr: newTracer(opts), dir: dir, cache: cache, interpret: opts.InterpretUntilCompiled,
		modules: make(map[*Module]*cacheUse), inCompile: make(map[*Module]string), turns: compileTurns}
	e.turn = sync.NewCond(&e.mu)
	e.preempt = make(map[*Module]context.CancelFunc)
	return e, nil
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// CacheDir returns the directory of the compilation cache.
func (e *Engine) CacheDir() string { return e.dir }

// CodeFiles lists the files of the compiled code, in the cache, of the
// module whose bytes hash to sum (SHA-256, hex), or nil when there are
// none. A caller that will load the module later (a plugin listed from
// the list cache loads on first use) keeps them from a cache prune with
// them.
func (e *Engine) CodeFiles(sum string) []string {
	if e == nil || len(sum) != 64 || e.cache.inMemory() {
		return nil
	}
	u := cacheUse{dir: filepath.Join(e.cache.dir, sum[:32])} // the key: the first half of the SHA-256
	return u.entries()
}

// Close closes every module (see [Module.Close]) and waits, bounded by
// ctx, for the compiles running in the background to end, so that the
// next start finds their code in the cache.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	mods := make([]*Module, 0, len(e.modules))
	for m := range e.modules {
		mods = append(mods, m)
	}
	e.mu.Unlock()
	var errs []error
	for _, m := range mods {
		errs = append(errs, m.Close(ctx))
	}
	errs = append(errs, e.waitCompiles(ctx))
	e.cache.close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sandbox: close: %w", err)
	}
	return nil
}

// Load compiles wasm once, through the Engine's compilation cache, and
// prepares a pool of up to lim.Instances warm instances. One instance is
// created before Load returns, which proves that the module instantiates
// (its imports resolve, its memory fits); if the module exports
// abi.ExportABIVersion, Load also calls it, which runs a WASI reactor's
// _initialize (about 2.6 ms for Go) so the first real call does not pay it.
// name is used in errors and logs. Errors are *LoadError.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, lim Limits) (*Module, error) {
	if e.tr == nil {
		return e.load(ctx, name, wasm, lim, chosenBackend(ctx))
	}
	ctx, sp := e.tr.Start(ctx, "load "+name, trace.WithAttributes(attribute.String("mcp.plugin", name), attribute.Int("wasm.bytes", len(wasm))))
	m, err := e.load(ctx, name, wasm, lim, chosenBackend(ctx))
	var le *LoadError
	if errors.As(err, &le) {
		sp.SetAttributes(attribute.String("error.type", le.Stage))
	}
	endSpan(sp, err)
	return m, err
}

// ErrNotKept is returned by [Engine.LoadKept] when the compile cache
// keeps no prepared module for the code, or what it keeps did not load:
// the caller loads the code's bytes with [Engine.Load].
var ErrNotKept = errors.New("sandbox: no prepared module kept for this code")

// LoadKept is Load for the code whose bytes hash to sum (SHA-256, hex),
// from what the compile cache keeps of it, without the bytes: the module
// as prepared for compiling (prepared.go) beside its compiled code, kept
// by an earlier load of those very bytes in a directory named by their
// hash, and checked against its record as it is read. What it runs is
// therefore what hashed to sum. Any failure (nothing kept, an entry that
// fails its check or does not compile, another runtime chosen in ctx) is
// an error wrapping [ErrNotKept], after which Load does the whole work.
func (e *Engine) LoadKept(ctx context.Context, name, sum string, lim Limits) (*Module, error) {
	b, err := hex.DecodeString(sum)
	if c := coreruntime.From(ctx); err != nil || len(b) != sha256.Size || c.New != nil || c.CloseOnDone || lim.ListOnly || e.cache.prepared == "" {
		return nil, ErrNotKept
	}
	log := e.log.With("plugin", name)
	use := e.cache.getKey(hex.EncodeToString(b[:16]), log)
	var code []byte
	free := func() {}
	if use.hasCode() {
		code, free = use.readPrepared(log)
	}
	if code == nil {
		use.close(ctx)
		return nil, ErrNotKept
	}
	m, err := e.Load(withKept(ctx, code, use), name, code, lim)
	free() // compiled, or failed to: nothing keeps the bytes
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotKept, err)
	}
	return m, nil
}

// load is Load with the backend that compiles the module: the native
// kernel with a way to stop its calls, or, in tests, the reference.
func (e *Engine) load(ctx context.Context, name string, wasm []byte, lim Limits, newBE newBackend) (*Module, error) {
	k, isKept := keptIn(ctx)
	refuse := func(le *LoadError) (*Module, error) {
		if isKept {
			k.use.close(ctx) // LoadKept's, not yet handed on
		}
		return nil, le
	}
	defer e.Loading()()
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return refuse(&LoadError{Module: name, Stage: "compile", Err: ErrEngineClosed})
	}
	lim, err := normalize(lim)
	if err != nil {
		return refuse(&LoadError{Module: name, Stage: "limits", Err: err})
	}
	rc := runtimeConfig(false, lim)
	log := e.log.With("plugin", name)
	if err := checkFormat(wasm); err != nil {
		return refuse(&LoadError{Module: name, Stage: "compile", Err: err})
	}
	use := k.use // LoadKept's: the directory of the bytes it stands for
	if !isKept {
		use = e.cache.get(wasm, log)
	}
	// Components run on their own loader, which has one engine. A kept
	// load's bytes are freed when LoadKept returns: never handed to a
	// background compile, they are compiled now even if the code went.
	tiered := !isKept && (e.interpret && lim.InterpretFirst || lim.ListOnly) && !IsComponent(wasm) && !use.hasCode()
	var be backend
	var sigs map[string]signature
	if tiered {
		// No cache: the interpreter's code lives as long as its runtime.
		be, sigs, err = newBE(ctx, runtimeConfig(true, lim), wasm, name, lim, log)
	} else {
		be, sigs, use, err = e.compile(ctx, use, rc, wasm, name, lim, log, newBE)
	}
	if err != nil {
		use.close(ctx)
		var le *LoadError
		if errors.As(err, &le) {
			le.Module = name
			return nil, le
		}
		stage := "compile"
		if strings.Contains(err.Error(), "over limit") {
			stage = "limits"
		}
		return nil, &LoadError{Module: name, Stage: stage, Err: describeDecodeError(wasm, err)}
	}
	if !tiered {
		use.record()
	}

	// Every backend sees the mounts through rootfs (mountFS), which keeps
	// every path and symlink beneath its mount.
	fsc, mounts, err := mountFS(lim.AllowedPaths, lim.MayRequestPaths, lim.Hidden, e.log, name)
	if err != nil {
		be.Close(ctx, true)
		use.close(ctx)
		return nil, &LoadError{Module: name, Stage: "limits", Err: err}
	}
	mc := wazero.NewModuleConfig().
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader).
		WithFSConfig(fsc)
	keys := make([]string, 0, len(lim.Env))
	for k := range lim.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		mc = mc.WithEnv(k, lim.Env[k])
	}

	m := newModule(e, name, be, mc, lim, sigs, log)
	if e.tr != nil || len(lim.MayRequestPaths) > 0 {
		m.mounts = mounts
	}
	if err := m.warm(ctx); err != nil {
		m.Close(context.Background())
		use.close(ctx)
		return nil, &LoadError{Module: name, Stage: "instantiate", Err: err}
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		m.Close(ctx)
		use.close(ctx)
		return nil, &LoadError{Module: name, Stage: "instantiate", Err: ErrEngineClosed}
	}
	switch {
	case tiered && lim.ListOnly:
		// Nothing will run compiled code: none is made, and the compiles
		// of other modules of the name go on.
		e.modules[m] = nil
	case tiered:
		// The background compile holds use; the swap hands it to m.
		e.modules[m] = nil
		m.startCompile(use, rc, wasm, newBE)
	default:
		e.modules[m] = use // released by forget, when m closes
	}
	e.mu.Unlock()
	if tiered && lim.ListOnly {
		use.close(ctx)
		return m, nil
	}
	e.supersede(m)
	return m, nil
}

// Loading marks a load running until the returned func is called: what
// a caller does around Load to make a plugin served (waiting for a CPU,
// reading its lists) counts as the Load itself does. Background compiles
// (tier.go) start only while no load runs, so that they never slow the
// loads down; one that runs for a closed module (its code compiled for
// later) stops, and starts again when the loads end.
func (e *Engine) Loading() (done func()) {
	e.mu.Lock()
	e.loads++
	for m, stop := range e.preempt {
		stop()
		delete(e.preempt, m)
	}
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.loads--
			e.turn.Broadcast()
			e.mu.Unlock()
		})
	}
}

// runtimeConfig is the wazero configuration of a module with limits lim:
// the optimizing compiler, or the interpreter.
func runtimeConfig(interpreter bool, lim Limits) wazero.RuntimeConfig {
	rc := wazero.NewRuntimeConfig()
	if interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	// Without this (or the native runtime's loop poll, which turns it
	// off again), a guest in an endless loop never stops; both engines
	// honour it. Debug info off: wazero would parse a module's DWARF
	// (wasi-libc brings ≈ 100 kB of it to every C guest) and keep it for
	// the module's life, only to put source lines into the stack trace
	// that firstLine drops.
	return rc.WithCloseOnContextDone(true).WithMemoryLimitPages(lim.MemoryPages).WithDebugInfoEnabled(false)
}

// compile compiles wasm through use, the module's compilation cache; when
// the cache is at fault rather than the module, once more through a cache
// that was cleaned or in memory. It returns the cache the code was
// compiled through, which the caller releases.
func (e *Engine) compile(ctx context.Context, use *cacheUse, rc wazero.RuntimeConfig, wasm []byte, name string,
	lim Limits, log *slog.Logger, newBE newBackend) (backend, map[string]signature, *cacheUse, error) {
	for retried := false; ; retried = true {
		var be backend
		var sigs map[string]signature
		var err error
		// One compile of the same code at a time: a second (a first call
		// that loads while the background compile of the module's
		// listing load still runs) then reads what the first stored.
		use.compiling.Lock()
		if IsComponent(wasm) {
			// Components run on their own loader: the Extism kernel does
			// not know the Component Model.
			be, sigs, err = newComponentBackend(ctx, use.config(rc), wasm, lim, log, e.log, name)
		} else {
			be, sigs, err = newBE(withPrepared(ctx, use), use.config(rc), wasm, name, lim, log)
		}
		use.compiling.Unlock()
		if err == nil || retried || !use.fault(err, log) {
			return be, sigs, use, err
		}
		if _, ok := keptIn(ctx); ok {
			return be, sigs, use, err // LoadKept's caller loads the bytes
		}
		// The cache's fault, not the module's.
		use.close(ctx)
		use = e.cache.get(wasm, log)
	}
}

// forget drops m, which has closed, and releases its compile cache.
func (e *Engine) forget(m *Module) {
	e.mu.Lock()
	use := e.modules[m]
	delete(e.modules, m)
	e.mu.Unlock()
	if use != nil {
		_ = use.close(context.Background())
	}
}
