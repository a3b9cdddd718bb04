package plugins

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/plugins/watch"
)

// Dynamic lists. A plugin that changes its own lists at run time (a tool
// added by a call, as hyper-mcp plugins do) calls notify_tool_list_changed
// or its prompt or resource variant. listPeer (callstate.go) catches that
// signal on its way to the client; the Manager then re-reads that
// plugin's lists, after the same debounce as file changes, from the
// instance that holds the plugin's state, and swaps in a new generation. The clients hear of it
// through the registry, like any reload, once the new lists serve.

// listSignals gathers the names of plugins that signalled a list change.
// A signal costs a map insert and never blocks, so a guest signalling in a
// tight loop slows only itself; however often it signals, its lists are
// re-read at most once per debounced burst.
type listSignals struct {
	mu      sync.Mutex
	pending map[string]struct{}
	// files whose plugin must be reloaded: its code is not what it was
	// listed from (lazy.go)
	files map[string]struct{}
	poke  chan struct{} // holds one token while pending or files is not empty
}

func newListSignals() *listSignals {
	return &listSignals{pending: map[string]struct{}{}, files: map[string]struct{}{}, poke: make(chan struct{}, 1)}
}

// stale asks for a reload of the plugins served from file.
func (s *listSignals) stale(file string) {
	s.mu.Lock()
	s.files[file] = struct{}{}
	s.mu.Unlock()
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// takeStale returns the files stale was called with since the last call.
func (s *listSignals) takeStale() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	files := slices.Sorted(maps.Keys(s.files))
	clear(s.files)
	return files
}

func (s *listSignals) signaller(name string) func() {
	return func() {
		s.mu.Lock()
		s.pending[name] = struct{}{}
		s.mu.Unlock()
		select {
		case s.poke <- struct{}{}:
		default:
		}
	}
}

func (s *listSignals) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Sorted(maps.Keys(s.pending))
	clear(s.pending)
	return names
}

// Relist returns a generation like cur in which the plugins called names
// show the lists they return now, or nil when none could be re-read (each
// failure is logged; that plugin keeps its lists). Everything else is
// shared with cur, which the caller must hold. The caller owns the result.
func (l *Loader) Relist(ctx context.Context, cur *Generation, names []string) (*Generation, error) {
	cores := make([]*core, len(cur.Plugins))
	specs := make([]*config.Spec, len(cur.Plugins))
	changed := false
	for i, p := range cur.Plugins {
		specs[i] = &p.Spec
		if slices.Contains(names, p.Name) {
			if nc, err := l.relistCore(ctx, p.core); err != nil {
				l.log.Error("plugin lists not re-read; the previous lists keep serving", "plugin", p.Name, "err", err)
			} else {
				cores[i], changed = nc, true
				continue
			}
		}
		if !p.core.acquire() { // cannot happen while cur is held
			for _, c := range cores[:i] {
				_ = c.release(context.WithoutCancel(ctx))
			}
			return nil, fmt.Errorf("relist: plugin %q is closed", p.Name)
		}
		cores[i] = p.core
	}
	if !changed || ctx.Err() != nil {
		for _, c := range cores {
			_ = c.release(context.WithoutCancel(ctx))
		}
		return nil, ctx.Err()
	}
	g := l.assemble(cur.Config, specs, cores, nil, cur, l.nextID(cur))
	g.Failures = cur.Failures
	return g, nil
}

// relistCore returns a core like c, on the same module, with the lists the
// module returns now.
func (l *Loader) relistCore(ctx context.Context, c *core) (*core, error) {
	root := c.root()
	if !root.acquire() {
		return nil, fmt.Errorf("plugin %q is closed", c.name)
	}
	nc := &core{name: c.name, module: c.module, guest: c.guest, native: c.native, hash: c.hash, abi: c.abi, runtime: c.runtime, sum: c.sum, signer: c.signer,
		guestVersion: c.guestVersion, strict: c.strict, model: c.model, log: c.log, signal: c.signal, obs: c.obs, base: root,
		unprovided: c.unprovided}
	nc.discarded.Store(c.discarded.Load())
	if _, err := l.readLists(ctx, nc); err != nil {
		_ = root.release(context.WithoutCancel(ctx))
		return nil, err
	}
	nc.refs.Store(1)
	return nc, nil
}

// followLists re-reads the lists of the plugins that signal a change,
// debounced like file changes, until ctx is done. With a Store, a local
// signal is also published to the other replicas, and theirs are
// followed: the plugin's lists are re-read here too.
func (m *Manager) followLists(ctx context.Context) {
	quiet := m.opts.Debounce
	if quiet <= 0 {
		quiet = watch.DefaultDebounce
	}
	sig := m.opts.Loader.signals
	in := make(chan string)
	out := make(chan []string)
	remote := make(chan []string)
	replica := rand.Text()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned here; ends with ctx
		defer wg.Done()
		watch.Debounce(ctx, in, out, quiet, watch.MaxDelayFactor*quiet)
	}()
	if m.opts.Store != nil {
		wg.Go(func() { // owned here; ends with ctx
			m.followRelists(ctx, replica, remote)
		})
	}
	defer wg.Wait()
	feed := func(names []string) bool {
		for _, n := range names {
			select {
			case in <- n:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig.poke:
			if files := sig.takeStale(); len(files) > 0 {
				// Not in this loop: a reload waits for the one running.
				wg.Go(func() { // owned here; ends with the reload
					m.log.Warn("plugin code differs from what it was listed from; reloading it", "files", files)
					m.Reload(ctx, files)
				})
			}
			names := sig.take()
			m.shareRelist(ctx, replica, names)
			if !feed(names) {
				return
			}
		case names := <-remote:
			if !feed(names) {
				return
			}
		case names := <-out:
			m.relist(ctx, names)
		}
	}
}

// relistChannel carries plugins' own list changes between replicas.
const relistChannel = "lists:relist"

type relistMessage struct {
	From    string   `json:"from"`
	Plugins []string `json:"plugins"`
}

// shareRelist tells the other replicas that names changed their lists.
func (m *Manager) shareRelist(ctx context.Context, replica string, names []string) {
	if m.opts.Store == nil || len(names) == 0 {
		return
	}
	b, _ := json.Marshal(relistMessage{From: replica, Plugins: names})
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := m.opts.Store.Publish(pctx, relistChannel, b); err != nil {
		m.log.Warn("plugin list change not shared: other replicas keep their lists of it", "plugins", names, "err", err)
	}
}

// followRelists hands the plugins other replicas re-list to out until
// ctx ends.
func (m *Manager) followRelists(ctx context.Context, replica string, out chan<- []string) {
	var once sync.Once
	store.Follow(ctx, m.opts.Store, store.Follower{
		Message: func(msg store.Message) {
			var r relistMessage
			if err := json.Unmarshal(msg.Payload, &r); err != nil || r.From == replica {
				return
			}
			select {
			case out <- r.Plugins:
			case <-ctx.Done():
			}
		},
		Err:        func(err error) { m.log.Warn("other replicas' plugin list changes not followed", "err", err) },
		Subscribed: func() { once.Do(func() { close(m.relistReady) }) },
	}, relistChannel)
}

// relist swaps in a generation with the re-read lists of names and
// reports it like a reload, its Trigger naming each plugin as
// "list_changed:<name>".
func (m *Manager) relist(ctx context.Context, names []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	start := time.Now()
	reg := m.opts.Registry
	cur, release := reg.Acquire()
	defer release()
	g, err := m.opts.Loader.Relist(ctx, cur, names)
	if err != nil || g == nil {
		return // logged by Relist, or shutting down
	}
	rep := ReloadReport{Gen: g.ID} // failures, if any, were reported when they happened
	for _, n := range names {
		rep.Trigger = append(rep.Trigger, "list_changed:"+n)
	}
	rep.Changes = reg.Swap(ctx, g)
	rep.Dur = time.Since(start)
	if m.opts.OnReload != nil {
		m.opts.OnReload(rep)
	} else {
		rep.Log(ctx, m.log)
	}
}
