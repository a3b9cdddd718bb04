package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/sandbox"
)

// Lazy modules. When a plugin's lists come from the list cache
// (listcache.go), nothing about it needs compiled code until it is first
// used: the loader gives its core a lazyModule, which answers HasExport
// and Exports from the export section and compiles and instantiates the
// module on the first call (or list re-read). A warm start then lists
// every tool without compiling anything, and a plugin nobody calls costs
// no compiled code and no instance.
//
// The first use re-reads the lists from the fresh instance before any
// call runs on it; when they differ from what the cache said (lists that
// depend on files, the network or the clock), the cache is rewritten and
// the plugin signals a list change, which the Manager re-reads and sends
// to clients like any dynamic list.

// lazyModule is a Module compiled on first use.
type lazyModule struct {
	name    string
	file    string // the code, read (and checked against sum) on first use
	wasm    []byte // or the code itself, held until then (see Loader.lazy)
	sum     string // its SHA-256, hex
	lim     sandbox.Limits
	exports []string // sorted function exports
	log     *slog.Logger
	load    func(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error)
	// loadKept loads, without reading the file, the code the engine kept
	// prepared from the digest sum (sandbox.Engine.LoadKept), when the
	// file's metadata is still stat, what the file digest cache vouched
	// for when it listed the plugin; nil (or a zero stat) always reads.
	loadKept func(ctx context.Context, name, sum string, lim sandbox.Limits) (Module, error)
	stat     cachefile.Stat
	// loaded runs once on the fresh module, before any call uses it (the
	// list check); nil means nothing to check.
	loaded func(ctx context.Context, m Module)
	// stale runs when the file is not what was listed (see compile); nil
	// means nothing to do.
	stale func()

	// ready is m once loaded and until Close, read without mu: the path
	// of every call.
	ready atomic.Pointer[loadedModule]

	mu      sync.Mutex
	m       Module        // once loaded
	loading chan struct{} // closed when a load attempt ends; nil when none runs
	err     error         // the last attempt's failure
	closed  bool
}

// errLazyClosed is returned by calls on a lazy module closed before it
// loaded.
var errLazyClosed = errors.New("module closed")

// ensure returns the loaded module, loading it on first use. The load runs
// detached from ctx, so a caller that gives up does not fail it for the
// others; a failed load is retried by the next caller.
func (lm *lazyModule) ensure(ctx context.Context) (Module, error) {
	if r := lm.ready.Load(); r != nil {
		return r.m, nil
	}
	lm.mu.Lock()
	if lm.m != nil {
		m := lm.m
		lm.mu.Unlock()
		return m, nil
	}
	if lm.closed {
		lm.mu.Unlock()
		return nil, fmt.Errorf("plugin %q: %w", lm.name, errLazyClosed)
	}
	if lm.loading == nil {
		lm.loading = make(chan struct{})
		go lm.run(lm.loading)
	}
	ch := lm.loading
	lm.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if lm.m != nil {
		return lm.m, nil
	}
	if lm.err == nil {
		return nil, fmt.Errorf("plugin %q: %w", lm.name, errLazyClosed)
	}
	return nil, lm.err
}

// loadedModule is a lazyModule's loaded module, as ready holds it.
type loadedModule struct{ m Module }

// run makes one load attempt and publishes its outcome.
func (lm *lazyModule) run(done chan struct{}) {
	ctx := context.Background()
	start := time.Now()
	m, err := lm.compile(ctx)
	if err == nil && lm.loaded != nil {
		lm.loaded(ctx, m)
	}
	// Compiling (or loading compiled code from wazero's cache) leaves
	// tens of MB of garbage; give it back now, once per module, rather
	// than over the scavenger's minutes (RSS after 100 calls with the root
	// config: 70 → 54 MB), once the module is published: the calls
	// waiting for it do not wait for the collection too.
	defer debug.FreeOSMemory()
	lm.mu.Lock()
	defer lm.mu.Unlock()
	defer close(done)
	lm.loading = nil
	switch {
	case err != nil && errors.Is(err, sandbox.ErrEngineClosed):
		// Shutting down: no call will come again, and nothing is wrong
		// with the plugin.
		lm.err = fmt.Errorf("plugin %q: loading its module on first use: %w", lm.name, err)
		lm.log.Info("plugin module not loaded on first use: the server is shutting down", "plugin", lm.name)
	case err != nil:
		lm.err = fmt.Errorf("plugin %q: loading its module on first use: %w", lm.name, err)
		lm.log.Error("plugin module not loaded on first use; the next call tries again", "plugin", lm.name, "err", err)
	case lm.closed:
		_ = m.Close(ctx)
	default:
		lm.m, lm.err, lm.wasm = m, nil, nil
		lm.ready.Store(&loadedModule{m})
		code := "compiled"
		if st, ok := m.(statser); ok && st.Stats().Interpreted {
			// Its compiled code was not in the cache (sandbox/tier.go).
			code = "interpreter, compiling in the background"
		}
		lm.log.Info("plugin module loaded on first use", "plugin", lm.name, "elapsed", time.Since(start).Round(time.Millisecond), "code", code)
	}
}

// compile reads the code, checks it is what was listed, and loads it:
// what runs is what was hashed. A file that is not (changed since it was
// listed, the plugin's own file rewritten while this generation still
// serves, or metadata that did not show a change: filedigest.go) is
// refused, and stale runs: it drops the file's digest and has the plugin
// reloaded.
//
// A module listed through the file digest cache whose file's metadata is
// still what the cache vouched for is first loaded from what the engine
// kept of that digest (its prepared module and compiled code), without
// reading the file: the same trust that listed it, and what runs is still
// what hashed to the digest. Only when nothing is kept is the file read.
func (lm *lazyModule) compile(ctx context.Context) (Module, error) {
	if lm.wasm == nil && lm.loadKept != nil {
		if st, ok := cachefile.StatOf(lm.file); ok && st == lm.stat {
			m, err := lm.loadKept(ctx, lm.name, lm.sum, lm.lim)
			if err == nil {
				return m, nil
			}
			if err != sandbox.ErrNotKept { // nothing kept says nothing; a kept module that failed does
				lm.log.Debug("plugin's kept code did not load: loading it from its file", "plugin", lm.name, "err", err)
			}
		}
	}
	wasm := lm.wasm
	if wasm == nil {
		var err error
		if wasm, err = os.ReadFile(lm.file); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
	}
	h := sha256.Sum256(wasm)
	if got := hex.EncodeToString(h[:]); got != lm.sum {
		if lm.stale != nil {
			lm.stale()
		}
		return nil, fmt.Errorf("%s changed since the plugin was listed (sha256 %s, listed from %s); a reload serves the new code (a Manager following lists starts one now)", lm.file, got, lm.sum)
	}
	m, err := lm.load(ctx, lm.name, wasm, lm.lim)
	return m, withFile(err, lm.file)
}

func (lm *lazyModule) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	m, err := lm.ensure(ctx)
	if err != nil {
		return nil, err
	}
	return m.Call(ctx, export, input)
}

// HasExport answers from the export section, without loading.
func (lm *lazyModule) HasExport(name string) bool {
	_, ok := slices.BinarySearch(lm.exports, name)
	return ok
}

// Exports lists the function exports, without loading.
func (lm *lazyModule) Exports() []string { return slices.Clone(lm.exports) }

// CallI32 loads the module and calls a plain i32 export.
func (lm *lazyModule) CallI32(ctx context.Context, export string) (int32, error) {
	m, err := lm.ensure(ctx)
	if err != nil {
		return 0, err
	}
	vm, ok := m.(versioner)
	if !ok {
		return 0, fmt.Errorf("plugin %q: %s: module cannot call plain exports", lm.name, export)
	}
	return vm.CallI32(ctx, export)
}

// Stats are the loaded module's, or zero before it loads.
func (lm *lazyModule) Stats() sandbox.Stats {
	lm.mu.Lock()
	m := lm.m
	lm.mu.Unlock()
	if st, ok := m.(statser); ok {
		return st.Stats()
	}
	return sandbox.Stats{}
}

// Close closes the module if it loaded; a load still running closes what
// it loads as soon as it ends.
func (lm *lazyModule) Close(ctx context.Context) error {
	lm.mu.Lock()
	lm.closed = true
	m := lm.m
	lm.m = nil
	lm.ready.Store(nil)
	lm.mu.Unlock()
	if m != nil {
		return m.Close(ctx)
	}
	return nil
}

// withFile names file in err when err says the bytes are not a module
// mcphost can load (the sandbox sees bytes, not where they came from).
func withFile(err error, file string) error {
	var fe *sandbox.FormatError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = file
	}
	return err
}
