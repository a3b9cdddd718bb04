package plugins

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/plugins/config"
)

// Registry holds the current generation for concurrent readers. A reader
// [Registry.Acquire]s the generation, uses it for one request, and releases
// it; [Registry.Swap] installs a new generation and the old one is closed
// when its last reader releases it. A call that started on the old
// generation finishes there; one that starts after Swap returns sees the
// new one.
type Registry struct {
	cur   atomic.Pointer[held]
	ready chan struct{}
	once  sync.Once
	log   *slog.Logger

	mu     sync.Mutex // guards subs and serializes Swap
	subs   map[int]func(Changes)
	nextID int
}

// held is a generation with the count of its holders: one for being
// current, one per reader. The generation closes when it drops to zero.
type held struct {
	g    *Generation
	refs atomic.Int64
}

// NewRegistry returns a registry whose current generation is empty.
func NewRegistry() *Registry {
	r := &Registry{ready: make(chan struct{}), subs: map[int]func(Changes){}, log: slog.Default()}
	h := &held{g: &Generation{Config: config.DefaultConfig()}}
	h.g.index()
	h.refs.Store(1)
	r.cur.Store(h)
	return r
}

// Acquire returns the current generation, never nil, held until release is
// called (once; later calls do nothing). Before the first Swap it is an
// empty generation.
func (r *Registry) Acquire() (g *Generation, release func()) {
	for {
		h := r.cur.Load()
		n := h.refs.Load()
		if n <= 0 {
			continue // retired and released between the loads; reload
		}
		if h.refs.CompareAndSwap(n, n+1) {
			var done atomic.Bool
			return h.g, func() {
				if done.CompareAndSwap(false, true) {
					r.drop(context.Background(), h)
				}
			}
		}
	}
}

func (r *Registry) drop(ctx context.Context, h *held) {
	if h.refs.Add(-1) == 0 {
		if err := h.g.Close(ctx); err != nil {
			r.log.Error("close generation", "gen", h.g.ID, "err", err)
		}
	}
}

// Swap installs g as the current generation and returns what changed
// ([Diff] of the old and new). The old generation is closed as soon as no
// reader holds it, possibly before Swap returns. Subscribers hear about
// the changes, in the order they subscribed, before Swap returns, when
// anything changed. Swapping in the current generation changes nothing
// but ends the initial load (Ready).
func (r *Registry) Swap(ctx context.Context, g *Generation) Changes {
	return r.swap(ctx, g, true)
}

// Publish installs g like [Registry.Swap] while the load that builds it
// is still running: the plugins loaded so far serve at once, beside (on a
// reload) the previous versions of those still loading. Before the
// initial load is done, Ready stays open and the changes count as the
// initial load's (Changes.Initial), so that only sessions answered before
// it hear of them.
func (r *Registry) Publish(ctx context.Context, g *Generation) Changes {
	return r.swap(ctx, g, false)
}

func (r *Registry) swap(ctx context.Context, g *Generation, final bool) Changes {
	if g == nil {
		g = &Generation{Config: config.DefaultConfig()}
		g.index()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cur.Load()
	if old.g == g {
		if final {
			r.once.Do(func() { close(r.ready) })
		}
		return Changes{}
	}
	h := &held{g: g}
	h.refs.Store(1)
	r.cur.Store(h)
	c := Diff(old.g, g)
	select {
	case <-r.ready:
	default:
		c.Initial = true
		if final {
			r.once.Do(func() { close(r.ready) })
		}
	}
	r.drop(context.WithoutCancel(ctx), old)
	if c.Any() {
		for _, id := range slices.Sorted(maps.Keys(r.subs)) {
			r.subs[id](c)
		}
	}
	return c
}

// Close installs an empty generation, so the current one is closed once
// its readers are done.
func (r *Registry) Close(ctx context.Context) {
	r.Swap(ctx, nil)
}

// Ready is closed after the first Swap.
func (r *Registry) Ready() <-chan struct{} { return r.ready }

// Subscribe registers fn to hear about every Swap that changes anything.
// fn runs on the goroutine calling Swap, under the registry's swap lock:
// it must return quickly and must not call Swap or Subscribe (hand the
// changes to a goroutine of its own if there is work to do). cancel
// removes it.
func (r *Registry) Subscribe(fn func(Changes)) (cancel func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.nextID
	r.nextID++
	r.subs[id] = fn
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.subs, id)
	}
}
