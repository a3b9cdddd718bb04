package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/plugins/watch"
)

// ManagerOptions configure a [Manager].
type ManagerOptions struct {
	// Loader builds the generations and Registry serves them. Both are
	// required.
	Loader   *Loader
	Registry *Registry
	// ConfigFile is the plugins.toml every load reads ([LoadConfig]) and,
	// when watching, watches. "" means no file: every load uses
	// DefaultConfig() (no plugins) unless ReadConfig is set.
	ConfigFile string
	// ReadConfig, when set, is called instead of LoadConfig(ConfigFile) for
	// every load. Embedders and tests use it to supply specs with Native
	// modules.
	ReadConfig func() (*config.Config, error)
	// Watch turns on reloading when a watched file changes (see
	// [config.Config.WatchPaths]).
	Watch bool
	// FollowLists re-reads a plugin's lists when it signals a change
	// (notify_tool_list_changed and its prompt and resource variants) and
	// swaps them in like a reload, debounced like file changes. Run then
	// returns only once ctx is done, even without Watch.
	FollowLists bool
	// Debounce is the quiet period that ends a burst of changes (default
	// [watch.DefaultDebounce]).
	Debounce time.Duration
	// OnReload hears about every load, initial or not, after the swap,
	// except one cut short because its ctx ended (shutting down). It runs
	// on the goroutine doing the load and delays the next one. nil means
	// [ReloadReport.Log] to Logger.
	OnReload func(ReloadReport)
	// Logger receives watch problems. nil means slog.Default().
	Logger *slog.Logger
	// Store, when not nil and FollowLists is set, carries a plugin's own
	// list change to the other replicas sharing it, which re-read that
	// plugin's lists too (dynamic.go): a plugin whose lists come from
	// shared state (its key-value bucket) then lists the same everywhere.
	Store store.Store
}

// ReloadReport says what one load did.
type ReloadReport struct {
	// Gen is the ID of the generation serving afterwards (the one that
	// served before when Err is set).
	Gen uint64
	// Initial is true for the first load of [Manager.Run].
	Initial bool
	// Trigger holds the changed paths that caused the reload, sorted (nil
	// for the initial load and for [Manager.Reload] calls without paths).
	Trigger []string
	// Changes is what the swap changed ([Diff]).
	Changes Changes
	// Err is set when nothing was loaded: plugins.toml could not be read or
	// is invalid (one or more *ConfigError, joined), or ctx ended. The
	// previous generation keeps serving.
	Err error
	// Failures are the plugins of the new generation that failed to load;
	// for those with Kept set the previous version serves instead.
	Failures []Failure
	// Dur is how long the load took, from reading the config to the end
	// of the swap.
	Dur time.Duration
}

// Log writes the report as one line: "plugins loaded" for the initial
// load, "reloaded" for later ones (Info), "reload failed" when Err is set
// (Error). Plugin failures are listed by name only; the [Loader] has
// already logged each with its cause.
func (r ReloadReport) Log(ctx context.Context, log *slog.Logger) {
	dur := r.Dur.Round(100 * time.Microsecond)
	if r.Err != nil {
		log.ErrorContext(ctx, "reload failed", "gen", r.Gen, "trigger", r.Trigger, "err", r.Err, "dur", dur)
		return
	}
	var failed []string
	for _, f := range r.Failures {
		failed = append(failed, f.Plugin)
	}
	msg := "reloaded"
	if r.Initial {
		msg = "plugins loaded"
	}
	attrs := []any{"gen", r.Gen, "plugins", r.Changes.Reloaded, "changed", r.Changes.Kinds()}
	if len(failed) > 0 {
		attrs = append(attrs, "failed", failed)
	}
	log.InfoContext(ctx, msg, append(attrs, "dur", dur)...)
}

// Kinds names the lists that changed, in the order tools, resources,
// prompts.
func (c Changes) Kinds() []string {
	var k []string
	if c.Tools {
		k = append(k, "tools")
	}
	if c.Resources {
		k = append(k, "resources")
	}
	if c.Prompts {
		k = append(k, "prompts")
	}
	return k
}

// Manager keeps a Registry in step with plugins.toml and the files it
// names, the way Caddy reloads: each load builds the new generation to one
// side, reusing every plugin whose code and limits did not change, swaps
// it in atomically, and lets the old generation close once its in-flight
// calls finish. A load that cannot read the config changes nothing; a
// plugin that fails keeps its previous version (see [Loader.Build]). The
// watch never stops: the next change is loaded whatever happened before.
type Manager struct {
	opts ManagerOptions
	log  *slog.Logger

	mu      sync.Mutex     // serializes loads
	watcher *watch.Watcher // set while Run watches

	cmu    sync.Mutex              // guards cancel
	cancel context.CancelCauseFunc // ends the load running now, or nil

	// relistReady closes once other replicas' list changes are followed
	// (ManagerOptions.Store; for tests).
	relistReady chan struct{}
}

// reloadSettle is how long a reload runs before the plugins it loaded
// serve beside those still loading.
const reloadSettle = time.Second

// errSuperseded ends a load that a newer one replaces.
var errSuperseded = errors.New("superseded by a newer load")

// NewManager returns a Manager; [Manager.Run] starts it.
func NewManager(opts ManagerOptions) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Manager{opts: opts, log: opts.Logger, relistReady: make(chan struct{})}
}

// Run does the initial load and then, when watching, reloads after every
// debounced burst of changes until ctx is done. It returns nil once ctx is
// done (or right after the initial load without watching or following
// lists), or the error that kept it from watching at all (after ctx is
// done when following lists). The registry keeps the last
// generation; closing it is the caller's business.
func (m *Manager) Run(ctx context.Context) error {
	if m.opts.FollowLists {
		var wg sync.WaitGroup
		wg.Add(1)
		defer wg.Wait()
		go func() { // owned by Run, which waits for it; ends with ctx
			defer wg.Done()
			m.followLists(ctx)
		}()
	}
	if !m.opts.Watch {
		m.initial(ctx)
		if m.opts.FollowLists {
			<-ctx.Done()
		}
		return nil
	}
	w, err := watch.NewWatcher(watch.WatcherOptions{Debounce: m.opts.Debounce, Logger: m.log})
	if err != nil {
		m.initial(ctx)
		if m.opts.FollowLists {
			<-ctx.Done()
		}
		return err
	}
	defer w.Close()
	m.mu.Lock()
	m.watcher = w
	m.mu.Unlock()
	// The watch runs beside the initial load, so that a change made while
	// a plugin is still loading applies without waiting for it.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by Run, which waits for it; ends with the load
		defer wg.Done()
		m.initial(ctx)
	}()
	_ = w.Run(ctx, func(ctx context.Context, paths []string) { m.Reload(ctx, paths) })
	wg.Wait()

	m.mu.Lock()
	m.watcher = nil
	m.mu.Unlock()
	return nil
}

func (m *Manager) initial(ctx context.Context) {
	m.Reload(ctx, nil)
}

// Reload loads the config and plugins now, as a change to trigger would,
// and returns the report also given to OnReload. The first call (Run's,
// or this one) is the initial load.
//
// Reloads never overlap: a Reload ends the load still running (its
// plugins still building, compiling or starting stop, and load again in
// this one; those it loaded already serve and are reused), so a plugin
// stuck loading never holds back a change to the others.
func (m *Manager) Reload(ctx context.Context, trigger []string) ReloadReport {
	m.cmu.Lock()
	if m.cancel != nil {
		m.cancel(errSuperseded)
	}
	m.cmu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	lctx, cancel := context.WithCancelCause(ctx)
	m.cmu.Lock()
	m.cancel = cancel
	m.cmu.Unlock()
	defer func() {
		m.cmu.Lock()
		m.cancel = nil
		m.cmu.Unlock()
		cancel(nil)
	}()
	first := false
	select {
	case <-m.opts.Registry.Ready():
	default:
		first = true
	}
	return m.load(lctx, trigger, first)
}

// load does one load. m.mu must be held.
func (m *Manager) load(ctx context.Context, trigger []string, initial bool) (rep ReloadReport) {
	start := time.Now()
	rep = ReloadReport{Initial: initial, Trigger: trigger}
	reg := m.opts.Registry
	defer func() {
		if r := recover(); r != nil { // a bug must not end the watch
			rep.Err = fmt.Errorf("reload panicked: %v", r)
		}
		// A newer load follows: the initial load is not over yet.
		superseded := errors.Is(context.Cause(ctx), errSuperseded) || errors.Is(context.Cause(ctx), watch.ErrNewerChange)
		if rep.Err != nil {
			cur, release := reg.Acquire()
			rep.Gen = cur.ID
			if initial && !superseded {
				// Let requests waiting for the initial load go on with
				// what loaded (possibly nothing).
				reg.Swap(ctx, cur)
			}
			release()
		}
		rep.Dur = time.Since(start)
		switch {
		case rep.Err != nil && ctx.Err() != nil: // superseded, or shutting down: nothing to report
		case m.opts.OnReload != nil:
			m.opts.OnReload(rep)
		default:
			rep.Log(ctx, m.log)
		}
	}()

	cfg, err := m.readConfig()
	m.watch(cfg)
	if err != nil {
		rep.Err = err
		return rep
	}
	prev, release := reg.Acquire() // held so that what Build reuses stays open
	defer release()
	if initial && len(prev.Plugins) == 0 {
		// A first build; one that follows a superseded initial load
		// reuses what that load published.
		prev = nil
	}
	// No plugin waits for another: in the initial load each serves as
	// soon as it is loaded; in a reload, what loaded is published once the
	// reload has run for reloadSettle (a reload that ends sooner applies as
	// one change), and the others join as they finish.
	after := reloadSettle
	if initial {
		after = 0
	}
	var mu sync.Mutex // publishes may come from build's timer
	g, err := m.opts.Loader.build(ctx, cfg, prev, func(g *Generation) {
		c := reg.Publish(ctx, g)
		mu.Lock()
		rep.Changes = rep.Changes.merge(c)
		mu.Unlock()
	}, after)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		rep.Err = err
		return rep
	}
	rep.Changes = rep.Changes.merge(reg.Swap(ctx, g))
	rep.Gen, rep.Failures = g.ID, g.Failures
	return rep
}

// merge adds what d changed to c (the changes of one load that swapped
// several generations in).
func (c Changes) merge(d Changes) Changes {
	c.Tools, c.Resources, c.Prompts = c.Tools || d.Tools, c.Resources || d.Resources, c.Prompts || d.Prompts
	c.Initial = c.Initial || d.Initial
	c.Reloaded = union(c.Reloaded, d.Reloaded)
	c.Updated = union(c.Updated, d.Updated)
	return c
}

// union returns the sorted union of the sorted a and b.
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a), b...))))
}

func (m *Manager) readConfig() (*config.Config, error) {
	switch {
	case m.opts.ReadConfig != nil:
		return m.opts.ReadConfig()
	case m.opts.ConfigFile == "":
		return config.DefaultConfig(), nil
	}
	return LoadConfig(m.opts.ConfigFile)
}

// watch points the watcher at cfg's paths; with cfg nil (a config that
// failed to load) it adds the config file to what is watched already, so
// the fix is seen. m.mu must be held.
func (m *Manager) watch(cfg *config.Config) {
	w := m.watcher
	if w == nil {
		return
	}
	var paths []string
	if cfg != nil {
		paths = cfg.WatchPaths()
	} else {
		paths = w.Paths()
	}
	if m.opts.ConfigFile != "" {
		paths = append(paths, m.opts.ConfigFile)
	}
	if g := m.opts.Loader.grants; g != nil && !g.Shared() {
		// A grant revoked from the command line applies at once (grants
		// in a store are read on every check).
		paths = append(paths, g.File())
	}
	if err := w.Set(paths); err != nil {
		m.log.Warn("watch", "err", err)
	}
}
