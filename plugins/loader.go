package plugins

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/internal/progress"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// LoaderOptions configure a [Loader].
type LoaderOptions struct {
	// Engine loads Wasm modules. With nil, only specs with a Native module
	// load; the others fail.
	Engine *sandbox.Engine
	// BuildCacheDir holds Go-source plugins built by [source.BuildGo]; "" means
	// os.UserCacheDir()/mcphost/build.
	BuildCacheDir string
	// Logger receives load progress, skipped items and failures. nil means
	// slog.Default().
	Logger *slog.Logger

	// Remote sources and the cache (see package source).

	// DownloadCacheDir holds what url and oci sources fetched; "" means
	// os.UserCacheDir()/mcphost/download.
	DownloadCacheDir string
	// HTTPClient fetches url and oci sources; nil means a client of the
	// Loader's own.
	HTTPClient *http.Client
	// CacheMax, when positive, caps the build and download caches plus
	// CacheDirs (such as the sandbox's compilation cache): after every
	// Build, least recently used entries go until they fit (see
	// [source.PruneCache]). 0 means no cap.
	CacheMax  int64
	CacheDirs []string
	// ListCacheDir, when not "", holds what each plugin listed when it
	// loaded (listcache.go). A plugin found there is listed without
	// compiling its module, which loads on first use (lazy.go); "" turns
	// that off and every plugin loads at once.
	ListCacheDir string
	// Observer, when not nil, is told about every tool call of the
	// plugins this loader loads (see [Observer]).
	Observer Observer
	// Grants, when not nil, turns on consent (package consent): a plugin's
	// connection to a host its may_request_hosts names and its
	// allowed_hosts does not allow asks the person behind the client,
	// and allow_always answers are kept here. Every Build reads the file
	// again. nil refuses such connections as before, naming the key.
	Grants *consent.Grants
	// Store keeps each plugin's key-value state (kv.go), shared by the
	// replicas on it; StoreName names it in errors (its URL, password
	// masked). nil is an in-process store of the loader's own.
	Store     store.Store
	StoreName string
}

// Loader builds generations. It is safe for concurrent use, though callers
// normally build one generation at a time.
type Loader struct {
	log        *slog.Logger
	cache      *source.Cache
	httpClient *http.Client
	listDir    string
	listFailed atomic.Bool           // a list cache write failed, which was said
	racy       cachefile.RacyWindows // filedigest.go
	load       func(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error)
	// loadKept is the engine's LoadKept (lazy.go); nil: none.
	loadKept func(ctx context.Context, name, sum string, lim sandbox.Limits) (Module, error)
	engine   *sandbox.Engine // nil: Wasm does not load
	lastID   atomic.Uint64
	busy     sync.Map     // plugin name → the step it is in ("build", "compile")
	signals  *listSignals // plugins that signalled a list change (dynamic.go)
	obs      Observer
	grants   *consent.Grants
	consent  *consent.Decider // nil without Grants; each plugin's is For its code

	// compiles holds a slot per compile running (one per CPU). Only the
	// compile and instantiation take one: a build or download waiting on
	// something else must not keep another plugin from loading.
	compiles  chan struct{}
	store     store.Store
	storeName string
}

// Busy lists the plugins being loaded right now, each with the step it is
// in ("hash (build)", "echo (queued)" while it waits for a free CPU),
// sorted. A server whose startup wait runs out names them.
func (l *Loader) Busy() []string {
	var out []string
	l.busy.Range(func(k, v any) bool {
		out = append(out, fmt.Sprintf("%s (%s)", k, v))
		return true
	})
	slices.Sort(out)
	return out
}

// NewLoader returns a Loader.
func NewLoader(opts LoaderOptions) *Loader {
	l := &Loader{log: opts.Logger, httpClient: opts.HTTPClient, signals: newListSignals(), obs: opts.Observer, listDir: opts.ListCacheDir,
		racy: cachefile.Racy, compiles: make(chan struct{}, runtime.NumCPU())}
	if l.httpClient == nil {
		l.httpClient = newHTTPClient()
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	l.store, l.storeName = opts.Store, cmp.Or(opts.StoreName, "the store")
	if l.store == nil {
		l.store, l.storeName = store.NewMemory(), "the in-process store"
	}
	if opts.Grants != nil {
		l.grants = opts.Grants
		l.consent = consent.New(opts.Grants, l.log)
	}
	l.cache = source.NewCache(source.CacheOptions{BuildDir: opts.BuildCacheDir, DownloadDir: opts.DownloadCacheDir,
		Max: opts.CacheMax, ExtraDirs: opts.CacheDirs, Logger: l.log})
	if e := opts.Engine; e != nil {
		l.engine = e
		l.load = func(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
			m, err := e.Load(ctx, name, wasm, lim)
			if err != nil {
				return nil, err
			}
			return m, nil
		}
		l.loadKept = func(ctx context.Context, name, sum string, lim sandbox.Limits) (Module, error) {
			m, err := e.LoadKept(ctx, name, sum, lim)
			if err != nil {
				return nil, err
			}
			return m, nil
		}
	}
	return l
}

// Build loads every plugin of cfg into a new generation, loading plugins in
// parallel (compiling at most runtime.NumCPU at a time; builds and
// downloads do not wait for one another).
//
// A plugin that fails (missing file, checksum mismatch, bad Wasm, build
// error, unknown ABI, a list export that fails) is logged, recorded in
// Generation.Failures and left out; the others load. Items a plugin lists
// that are malformed (a tool without a usable inputSchema, a resource
// without a URI, …) are logged and left out.
//
// A plugin of prev whose code and limits are unchanged is reused: its
// module is neither recompiled nor re-instantiated, and when its filters
// and names are unchanged too, the new generation holds the very same
// *Plugin. prev may be nil.
//
// When a plugin fails and prev holds a plugin of the same name, that
// previous plugin (its module, lists and spec) serves in the new
// generation instead, and its Failure has Kept set: a broken save during
// development never takes a working tool away. A plugin that is not in cfg
// any more is dropped, working or not. The generation's Config is cfg even
// though a kept plugin runs under its old spec.
//
// Progress is logged at Info for a first build (prev == nil) and at Debug
// for rebuilds, whose callers report one summary per reload; failures are
// always logged at Error.
//
// Build fails only when ctx ends; then it releases everything it loaded.
// The caller owns the result and must Close it (a [Registry] does so when
// the generation is replaced).
func (l *Loader) Build(ctx context.Context, cfg *config.Config, prev *Generation) (*Generation, error) {
	return l.build(ctx, cfg, prev, nil, 0)
}

// build is Build. publish, when not nil, is given a generation each time a
// plugin finishes loading anew while others still load: the plugins
// loaded so far, and for the others (still loading or failed) their
// versions in prev. The receiver owns it, as it owns Build's result. None
// is published before after has passed since the build began: a build
// that ends sooner swaps in whole, as one change.
func (l *Loader) build(ctx context.Context, cfg *config.Config, prev *Generation, publish func(*Generation), after time.Duration) (*Generation, error) {
	if cfg == nil {
		cfg = config.DefaultConfig()
	}
	id := l.nextID(prev)
	start := time.Now()
	if l.grants != nil && !l.grants.Shared() { // a store's are read on every check
		if err := l.grants.Reload(); err != nil {
			l.log.Error("grants not read: no standing grant applies until the file reads; the person is asked again", "file", l.grants.File(), "err", err)
		}
	}
	level := slog.LevelInfo // of progress lines
	if prev != nil {
		level = slog.LevelDebug
	}
	b := l.newBuildRun(cfg, prev, id, publish, after <= 0)
	if publish != nil && !b.due {
		t := time.AfterFunc(after, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.due = true
			b.publishNow(ctx)
		})
		defer t.Stop()
	}
	used := &fileSet{}
	b.loadAll(ctx, used, level)

	if err := ctx.Err(); err != nil {
		for _, p := range b.loads {
			if p.core != nil {
				dropCore(ctx, p.core, p.reused)
			}
		}
		return nil, fmt.Errorf("build generation %d: %w", id, err)
	}
	g := b.generation()
	l.cache.Keep(ctx, used.files)
	l.log.Log(ctx, level, "generation built", "gen", id, "plugins", len(g.Plugins), "failed", len(g.Failures),
		"tools", len(g.Tools), "resources", len(g.Resources)+len(g.Templates), "prompts", len(g.Prompts),
		"dur", time.Since(start))
	return g, nil
}

// buildRun is one build in progress: each plugin's load, and the
// publishing of partial generations while they run.
type buildRun struct {
	l       *Loader
	cfg     *config.Config
	prev    *Generation
	id      uint64
	publish func(*Generation) // nil: none is published

	mu      sync.Mutex   // guards what follows, and loads' cores while publishing
	loads   []pluginLoad // by index in cfg.Plugins
	left    int          // valid plugins still loading
	pending bool         // a plugin loaded since the last publish
	due     bool         // publishing began
}

// pluginLoad is one plugin's part in a build: whether it may load, and
// once done what its load gave.
type pluginLoad struct {
	valid bool // its name is good and its own (checkNames); only a valid plugin loads
	done  bool // its load ended: loadResult is set
	loadResult
}

// loadResult is what one plugin's load gives: its core (nil when it
// failed), whether that core is the previous generation's, the skills
// directories it read, and why it failed.
type loadResult struct {
	core   *core
	reused bool
	dirs   *dirSkills
	err    error
}

// newBuildRun is the build of generation id from cfg, its plugins named
// (checkNames) and none loaded yet; due says whether it may publish at
// once.
func (l *Loader) newBuildRun(cfg *config.Config, prev *Generation, id uint64, publish func(*Generation), due bool) *buildRun {
	b := &buildRun{l: l, cfg: cfg, prev: prev, id: id, publish: publish, due: due}
	errs := make([]error, len(cfg.Plugins))
	valid := l.checkNames(cfg.Plugins, errs)
	b.loads = make([]pluginLoad, len(cfg.Plugins))
	for i := range b.loads {
		b.loads[i] = pluginLoad{valid: valid[i], loadResult: loadResult{err: errs[i]}}
		if valid[i] {
			b.left++
		}
	}
	return b
}

// loadAll loads every valid plugin, each in a goroutine of its own, and
// waits for them all.
func (b *buildRun) loadAll(ctx context.Context, used *fileSet, level slog.Level) {
	plugins := b.cfg.Plugins
	for i := range plugins {
		if b.loads[i].valid {
			b.l.busy.Store(plugins[i].Name, "queued") // until its compile starts
		}
	}
	var wg sync.WaitGroup
	for i := range plugins {
		if !b.loads[i].valid {
			continue
		}
		wg.Add(1)
		go func() { // owned by loadAll, which waits for it below
			defer wg.Done()
			defer b.l.busy.Delete(plugins[i].Name)
			t := time.Now()
			r := b.load(ctx, &plugins[i], used)
			b.finish(ctx, i, r)
			b.logLoad(ctx, level, &plugins[i], r, t)
		}()
	}
	wg.Wait()
}

// load loads spec's plugin and checks its apps and skills directories; a
// core that fails them is dropped.
func (b *buildRun) load(ctx context.Context, spec *config.Spec, used *fileSet) loadResult {
	c, reuse, err := b.l.loadBounded(ctx, &b.cfg.Server, spec, b.prev.lookup(spec.Name), used)
	var d *dirSkills
	if err == nil {
		err = checkApps(spec, c) // apps.go
		if err == nil {
			// Read on every build, as a reused core's skills
			// directories may have changed.
			d, err = readSkillDirs(spec)
		}
		if err != nil {
			dropCore(ctx, c, reuse)
			c, reuse = nil, false
		}
	}
	return loadResult{core: c, reused: reuse, dirs: d, err: err}
}

// finish records the load of plugin i, and publishes a generation when
// one is due.
func (b *buildRun) finish(ctx context.Context, i int, r loadResult) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.loads[i].loadResult, b.loads[i].done = r, true
	b.left--
	b.pending = b.pending || r.err == nil && !r.reused
	// Under mu, so that generations are published in the order
	// their plugins finished.
	b.publishNow(ctx)
}

// publishNow publishes the partial generation when publishing is due, a
// plugin loaded anew since the last one, and others still load. b.mu is
// held.
func (b *buildRun) publishNow(ctx context.Context) {
	if b.publish != nil && b.due && b.pending && b.left > 0 && ctx.Err() == nil {
		b.publish(b.partial())
		b.pending = false
	}
}

// logLoad logs the end of spec's load, begun at t: a failure is logged
// later, with whether the previous version was kept (generation).
func (b *buildRun) logLoad(ctx context.Context, level slog.Level, spec *config.Spec, r loadResult, t time.Time) {
	switch c := r.core; {
	case r.err != nil:
	case r.reused:
		b.l.log.Debug("plugin reused", "plugin", spec.Name, "gen", b.id)
	default:
		attrs := []any{"plugin", spec.Name, "gen", b.id, "abi", c.abi,
			"tools", len(c.tools), "resources", len(c.resources) + len(c.templates),
			"prompts", len(c.prompts), "dur", time.Since(t)}
		if c.sum != "" {
			attrs = append(attrs, "sha256", c.sum)
		}
		if c.signer != nil {
			attrs = append(attrs, "signer", c.signer.String(), "digest", c.signer.Digest)
		}
		b.l.log.Log(ctx, level, "plugin loaded", attrs...)
	}
}

// generation assembles the finished build: the plugins that loaded, and
// for each that failed its previous version when prev holds one (its
// Failure then Kept).
func (b *buildRun) generation() *Generation {
	plugins := b.cfg.Plugins
	specs := make([]*config.Spec, len(plugins))
	cores := make([]*core, len(plugins))
	dirs := make([]*dirSkills, len(plugins))
	var failures []Failure
	for i, p := range b.loads {
		specs[i], cores[i], dirs[i] = &plugins[i], p.core, p.dirs
		if p.err == nil {
			continue
		}
		f := Failure{Plugin: plugins[i].Name, Err: p.err}
		if old := b.prev.lookup(f.Plugin); p.valid && old != nil && old.core.acquire() {
			cores[i], specs[i], f.Kept = old.core, &old.Spec, true
		}
		b.l.log.Error("plugin failed", "plugin", f.Plugin, "gen", b.id, "kept", f.Kept, "err", p.err)
		failures = append(failures, f)
	}
	g := b.l.assemble(b.cfg, specs, cores, dirs, b.prev, b.id)
	g.Failures = failures
	return g
}

// dropCore lets go of a core loadOne returned that no generation will
// hold.
func dropCore(ctx context.Context, c *core, reused bool) {
	if c.native != nil && !reused {
		// Build's reference: when no published generation holds the
		// module, it stays open for the caller.
		c.refs.Add(-1)
		return
	}
	_ = c.release(context.WithoutCancel(ctx))
}

// partial assembles the generation of a build still running: the plugins
// done loading, and the previous versions of the others. Each plugin it
// holds is acquired for it. b.mu is held.
func (b *buildRun) partial() *Generation {
	plugins := b.cfg.Plugins
	specs := make([]*config.Spec, len(plugins))
	held := make([]*core, len(plugins))
	heldDirs := make([]*dirSkills, len(plugins)) // nil: the previous version's
	for i, p := range b.loads {
		if !p.valid {
			continue
		}
		if p.done && p.core != nil && p.core.acquire() {
			held[i], specs[i], heldDirs[i] = p.core, &plugins[i], p.dirs
		} else if old := b.prev.lookup(plugins[i].Name); old != nil && old.core.acquire() {
			held[i], specs[i] = old.core, &old.Spec
		}
	}
	return b.l.assemble(b.cfg, specs, held, heldDirs, b.prev, b.id)
}

func (l *Loader) nextID(prev *Generation) uint64 {
	for {
		last := l.lastID.Load()
		next := last + 1
		if prev != nil && prev.ID >= next {
			next = prev.ID + 1
		}
		if l.lastID.CompareAndSwap(last, next) {
			return next
		}
	}
}

// checkNames rejects specs built in code with a bad or repeated name
// (ParseConfig already rejects them in files).
func (l *Loader) checkNames(specs []config.Spec, errs []error) []bool {
	valid := make([]bool, len(specs))
	seen := map[string]bool{}
	for i, s := range specs {
		switch {
		case !config.ValidName(s.Name):
			errs[i] = fmt.Errorf("invalid plugin name %q", s.Name)
		case seen[s.Name]:
			errs[i] = fmt.Errorf("duplicate plugin name %q", s.Name)
		default:
			seen[s.Name] = true
			valid[i] = true
		}
	}
	return valid
}

// LoadTimeoutError says a plugin's load did not finish within its
// load_timeout; the plugin fails alone.
type LoadTimeoutError struct {
	Timeout time.Duration
	Err     error // what the load returned when it was stopped
}

func (e *LoadTimeoutError) Error() string {
	return fmt.Sprintf("load did not finish within load_timeout (%s; raise it in the plugin's table or in [server]): %v", e.Timeout, e.Err)
}

func (e *LoadTimeoutError) Unwrap() error { return e.Err }

// errLoadTimeout is the cause of a load's context when its load_timeout
// runs out.
var errLoadTimeout = errors.New("load_timeout ran out")

// loadBounded is loadOne within spec's load_timeout. Everything a load
// does stops when its context ends (a build's process group is killed, a
// start function is interrupted), except a compile, which finishes on its
// own without being waited for (see compile).
func (l *Loader) loadBounded(ctx context.Context, server *config.ServerConfig, spec *config.Spec, prev *Plugin, used *fileSet) (*core, bool, error) {
	d := config.LoadTimeout(spec, server)
	lctx, cancel := context.WithTimeoutCause(ctx, d, errLoadTimeout)
	defer cancel()
	c, reuse, err := l.loadOne(lctx, server, spec, prev, used)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(lctx), errLoadTimeout) {
		err = &LoadTimeoutError{Timeout: d, Err: err}
	}
	return c, reuse, err
}

// loadOne returns the core for spec: prev's when it can be shared (with a
// reference taken), or a newly loaded one.
func (l *Loader) loadOne(ctx context.Context, server *config.ServerConfig, spec *config.Spec, prev *Plugin, used *fileSet) (*core, bool, error) {
	if spec.Native != nil {
		return l.loadNative(ctx, server, spec, prev)
	}
	defer l.busy.Delete(spec.Name)
	if prev == nil {
		ctx = withFirstLoad(ctx) // a Go build writes the lists section (listsection.go)
	}
	c, reuse, err := l.loadWasm(ctx, server, spec, prev, used, true)
	if errors.Is(err, errNeedCode) {
		c, reuse, err = l.loadWasm(ctx, server, spec, prev, used, false)
	}
	return c, reuse, err
}

// errNeedCode: a plugin whose digest came from the file digest cache was
// not in the list cache, so its code must be read after all.
var errNeedCode = errors.New("the plugin's code is needed")

// loadWasm is loadOne for a Wasm plugin. With quick, the plugin's digest
// may come from the file digest cache (filedigest.go) rather than from
// reading its code, and it fails with errNeedCode when the code is needed
// after all.
func (l *Loader) loadWasm(ctx context.Context, server *config.ServerConfig, spec *config.Spec, prev *Plugin, used *fileSet, quick bool) (*core, bool, error) {
	lim := effectiveLimits(spec, server)
	wasm, file, d, signer, err := l.code(ctx, server, spec, used, quick)
	if err != nil {
		return nil, false, err
	}
	sum := d.Sum
	if l.consent != nil {
		// A grant stands for the code a person approved.
		lim.Consent = l.consent.For(consent.Code{Digest: "sha256:" + sum, Signer: signer.String()})
	}
	lim.KV = pluginKV(l.store, l.storeName, spec.Name, lim)
	model := instanceModel(spec, server, d.Exports)
	lim.Instances = model.Instances
	// A stateful instance that served a call stays on the interpreter
	// (~13x the cost per call) until a fault or a reload replaces it
	// (sandbox.Limits.KeepsState): only pools and plugins built from
	// their sources (restarted by every save) start there; a plugin from
	// a path compiles before its first call, as under its own host.
	lim.InterpretFirst = model.Instances > 1 || spec.Source != "" || spec.Build != nil
	lim.KeepsState = model.KeepsState
	if lim.Secrets, err = config.ResolveSecrets(spec, server, l.log); err != nil {
		return nil, false, err
	}
	for _, k := range spec.UnsetEnv {
		l.log.Warn("environment variable a policy grants is not set; the plugin does not get it", "plugin", spec.Name, "key", k)
	}
	strict := strictSchemas(spec, server)
	runtime := sandbox.RuntimeNative
	if d.Component {
		// Components run on sandbox/internal/component whatever runtime is set.
		runtime = "component"
	}
	// A signer is part of what a core is: the same code verified against
	// another signature table is not shared, so each reports its own.
	hash := coreHash(spec.Name, sum+signer.String(), lim, strict)
	if prev != nil && prev.core.native == nil && prev.core.hash == hash && prev.core.acquire() {
		return prev.core, true, nil
	}
	if l.load == nil {
		return nil, false, errors.New("no sandbox engine to load Wasm with")
	}
	var key string
	if l.listDir != "" {
		key = listKey(spec.Name, sum, lim, strict)
		e, msg := l.cachedLists(key), "plugin listed from the list cache; its module loads on first use"
		if e == nil && wasm == nil {
			return nil, false, errNeedCode
		}
		if e == nil && prev == nil { // a first start, or a plugin added
			e, msg = l.sectionLists(spec.Name, wasm, lim, key), "plugin listed from its lists section; its module loads on first use"
		}
		if e != nil {
			c := &core{name: spec.Name, hash: hash, runtime: runtime, strict: strict, model: model, log: l.log,
				signal: l.signals.signaller(spec.Name), obs: l.obs, abi: e.ABI, guestVersion: e.GuestVersion, sum: sum, signer: signer}
			if lm := l.lazy(spec, c, file, wasm, vouched(wasm, d), d.Exports, lim, key, e); lm != nil {
				c.module = lm
				c.guest = lazyGuestOf(lm, runtime, e.ABI)
				l.useLists(c, e)
				c.refs.Store(1)
				// Its compiled code is used later: no cache prune removes it
				// meanwhile (100 plugins of 4 MB of Go hold ~1.6 GB).
				for _, f := range l.engine.CodeFiles(sum) {
					used.add(f)
				}
				l.log.Debug(msg, "plugin", spec.Name)
				return c, false, nil
			}
		}
	}
	if wasm == nil {
		return nil, false, errNeedCode
	}
	// With the list cache, a plugin served for the first time (a first
	// start, one added) is loaded only to be listed (see listOnly): on the
	// interpreter, when its compiled code is not cached. One reloaded (a
	// save) keeps the module it is listed from: its author calls it next.
	listing := key != "" && prev == nil
	listLim := lim
	listLim.InterpretFirst = lim.InterpretFirst || listing
	if l.engine != nil {
		// Until the plugin is listed, the engine's background compiles
		// wait.
		defer l.engine.Loading()()
	}
	l.busy.Store(spec.Name, "queued") // until a CPU is free for it
	select {
	case l.compiles <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	l.busy.Store(spec.Name, "compile")
	done := progress.Track(ctx, l.log, spec.Name, "compile", slog.LevelDebug)
	m, err := l.compile(ctx, spec.Name, wasm, listLim)
	done(err)
	if err != nil {
		return nil, false, fmt.Errorf("load: %w", withFile(err, file))
	}
	c := &core{name: spec.Name, module: m, hash: hash, runtime: runtime, strict: strict, model: model, log: l.log,
		signal: l.signals.signaller(spec.Name), obs: l.obs, sum: sum, signer: signer}
	if u, ok := m.(interface{ UnprovidedImports() []string }); ok {
		c.unprovided = u.UnprovidedImports()
	}
	e, err := l.inspect(ctx, c)
	if err != nil {
		_ = m.Close(context.WithoutCancel(ctx))
		return nil, false, err
	}
	if key != "" {
		l.saveLists(key, e)
	}
	if listing {
		l.listOnly(ctx, spec, c, file, wasm, d.Exports, lim, key, e)
	}
	c.refs.Store(1)
	return c, false, nil
}

// loadNative is loadOne for an in-process module (config.Spec.Native).
func (l *Loader) loadNative(ctx context.Context, server *config.ServerConfig, spec *config.Spec, prev *Plugin) (*core, bool, error) {
	if prev != nil && sameModule(prev.core.native, spec.Native) && prev.core.acquire() {
		return prev.core, true, nil
	}
	c := &core{name: spec.Name, module: spec.Native, native: spec.Native, hash: "native", strict: strictSchemas(spec, server), runtime: "in-process",
		signal: l.signals.signaller(spec.Name), obs: l.obs}
	if _, err := l.inspect(ctx, c); err != nil {
		return nil, false, err // a Native module is closed only by the generations that hold it
	}
	c.refs.Store(1)
	return c, false, nil
}

// lazy returns a module for c that loads on first use (lazy.go), listed
// as e says, or nil when its exports did not read (nil). wasm is the
// code when it was read to list it (nil when the file digest cache
// vouched for the file): a plugin's own file (spec.Path) may be rewritten
// while this generation still serves calls (a reload in progress, or one
// that failed and left it serving), so the code it listed is held until
// its first use. Otherwise its first use reads the file and checks it
// against c's digest, unless st (what the file digest cache vouched for,
// when it listed the plugin without reading: zero otherwise) still holds
// and the engine kept the code prepared from that digest (lazy.go).
func (l *Loader) lazy(spec *config.Spec, c *core, file string, wasm []byte, st cachefile.Stat, exports []string, lim sandbox.Limits, key string, e *listEntry) *lazyModule {
	if exports == nil {
		return nil
	}
	lm := &lazyModule{name: spec.Name, file: file, sum: c.sum, lim: lim, exports: exports, log: l.log, load: l.load}
	if st != (cachefile.Stat{}) {
		lm.stat, lm.loadKept = st, l.loadKept
	}
	if spec.Path != "" {
		lm.wasm = wasm // the caches' files are content-keyed and never rewritten
	}
	lm.loaded = l.checkLists(c, key, e)
	lm.stale = func() { l.dropDigest(file); l.signals.stale(file) }
	return lm
}

// listOnly ends the listing load of c, when it ran on the interpreter:
// its module (~95 MB for a 4 MB Go guest, its instances' memory
// included) closes, its compile goes on in the background into the
// cache (sandbox/tier.go), and c's module becomes a lazy one, as on a
// warm start. A first start of many plugins then holds only the modules
// being listed, each plugin is listed after one interpreted load
// (~0.15 s for a 4 MB Go guest) rather than a compile (~1.5 s), and its
// first call loads what the compile stored. Its lists are re-read then,
// as on every first use.
func (l *Loader) listOnly(ctx context.Context, spec *config.Spec, c *core, file string, wasm []byte, exports []string, lim sandbox.Limits, key string, e *listEntry) {
	st, ok := c.module.(statser)
	if !ok || !st.Stats().Interpreted {
		return
	}
	lm := l.lazy(spec, c, file, wasm, cachefile.Stat{}, exports, lim, key, e)
	if lm == nil {
		return
	}
	m := c.module
	c.module = lm
	c.guest = lazyGuestOf(lm, c.runtime, c.abi) // the listing module's goes with it
	_ = m.Close(context.WithoutCancel(ctx))
	l.log.Debug("plugin listed on the interpreter; its module compiles in the background and loads on first use", "plugin", spec.Name)
}

// compile runs l.load, holding a compile slot until it returns. Compiling
// does not stop when ctx ends (start functions do), so compile returns
// ctx's error at once then, and the module, once compiled, is closed by the
// goroutine left waiting for it: a load that is cancelled or runs out of
// load_timeout never waits for a slow compile.
func (l *Loader) compile(ctx context.Context, name string, wasm []byte, lim sandbox.Limits) (Module, error) {
	type result struct {
		m   Module
		err error
	}
	ch := make(chan result, 1)
	go func() { // owned by compile, or, once it gave up, by itself: ends with l.load
		m, err := l.load(ctx, name, wasm, lim)
		<-l.compiles
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		return r.m, r.err
	case <-ctx.Done():
		go func() { // ends when the compile does
			if r := <-ch; r.m != nil {
				_ = r.m.Close(context.WithoutCancel(ctx))
			}
		}()
		return nil, ctx.Err()
	}
}

// code returns the plugin's Wasm and its digest (d.Sum: SHA-256, hex; its
// exports and kind), from its source (see sourceOf), checked against the
// sha256 pin when there is one, and who signed it when the spec has a
// signature table (the source verified it while fetching). With quick, a
// file given by path whose metadata the file digest cache knows is not
// read: wasm is nil, and the code is checked against d.Sum when it is
// read on first use (filedigest.go).
func (l *Loader) code(ctx context.Context, server *config.ServerConfig, spec *config.Spec, used *fileSet, quick bool) (wasm []byte, file string, d *fileDigest, signer *source.Signer, err error) {
	src, err := l.sourceOf(server, spec)
	if err != nil {
		return nil, "", nil, nil, err
	}
	_, byPath := src.(source.File)
	if quick && byPath {
		if d := l.cachedDigest(spec.Path); d != nil && (spec.SHA256 == "" || d.Sum == spec.SHA256) {
			used.add(spec.Path)
			l.log.Debug("plugin code not read yet: its file is as when it hashed to this digest; it is read and checked on first use",
				"plugin", spec.Name, "file", spec.Path, "sha256", d.Sum)
			return nil, spec.Path, d, nil, nil
		}
	}
	// A cached file is checked against the hash recorded when it was
	// written; a bad one is removed and fetched (built, downloaded) once
	// more.
	var st cachefile.Stat
	var sum string
	for again := false; ; again = true {
		file, err = src.Fetch(ctx)
		if err != nil {
			return nil, "", nil, nil, err
		}
		used.add(file)
		if byPath {
			st, _ = cachefile.StatOf(file) // before reading: a write after it shows
		}
		wasm, err = os.ReadFile(file)
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("read: %w", err)
		}
		h := sha256.Sum256(wasm)
		sum = hex.EncodeToString(h[:])
		cerr := l.cache.Check(file, sum)
		if cerr == nil {
			break
		}
		if again {
			return nil, "", nil, nil, fmt.Errorf("fetched again: %w", cerr)
		}
		l.log.Warn("cache entry failed its check: removed, fetching it again", "plugin", spec.Name, "file", file, "err", cerr)
	}
	if spec.SHA256 != "" && spec.Source == "" && sum != spec.SHA256 {
		return nil, "", nil, nil, &source.ChecksumError{File: file, Want: spec.SHA256, Got: sum}
	}
	if s, ok := src.(interface{ Signer() *source.Signer }); ok {
		signer = s.Signer()
	}
	d = &fileDigest{Sum: sum, Component: sandbox.IsComponent(wasm)}
	if exports, err := sandbox.FuncExports(wasm); err == nil {
		if exports == nil {
			// Read, and none (a component): not nil, which says the
			// exports did not read (lazy), also once through JSON.
			exports = []string{}
		}
		slices.Sort(exports)
		d.Exports = exports
		if byPath {
			l.saveDigest(file, st, d)
		}
	}
	return wasm, file, d, signer, nil
}

// strictSchemas is the plugin's strict_schemas, or the server's.
func strictSchemas(spec *config.Spec, server *config.ServerConfig) bool {
	if spec.StrictSchemas != nil {
		return *spec.StrictSchemas
	}
	return server.StrictSchemas
}

// coreHash identifies a loaded module: the same name, code and limits give
// the same module, which can then be shared across generations.
func coreHash(name, codeSum string, lim sandbox.Limits, strict bool) string {
	b, _ := json.Marshal(struct {
		Name, Code string
		Limits     sandbox.Limits
		Strict     bool
	}{name, codeSum, lim, strict}) // maps marshal with sorted keys, so this is canonical
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// sameModule reports whether a and b are the same module value, without
// panicking on modules of an incomparable type.
func sameModule(a, b Module) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}
