package host

import (
	"encoding/json"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/plugins"
)

// onChange is the registry subscription. It only gathers: the flush runs
// on the timer's goroutine, so the registry's Swap never waits on clients.
func (srv *Server) onChange(c plugins.Changes) {
	srv.chMu.Lock()
	defer srv.chMu.Unlock()
	close(srv.changed) // requests waiting for an item look again
	srv.changed = make(chan struct{})
	srv.changes.Tools = srv.changes.Tools || c.Tools
	srv.changes.Resources = srv.changes.Resources || c.Resources
	srv.changes.Prompts = srv.changes.Prompts || c.Prompts
	srv.changes.Reloaded = append(srv.changes.Reloaded, c.Reloaded...)
	srv.changes.Updated = append(srv.changes.Updated, c.Updated...)
	srv.changes.Initial = srv.changes.Initial || c.Initial
	srv.changeCount.Add(1)
	if srv.timer == nil && !srv.closed {
		srv.timer = time.AfterFunc(srv.coalesce, srv.flushChanges)
	}
}

// flushChanges sends one notification per changed kind to every
// initialized session, and resources/updated to the subscribers of each
// URI whose plugin was reloaded: a URI the changes name, or one that a
// reloaded plugin serves in the current generation (as a resource or
// through one of its templates). The initial load is not a change to a
// client answered nothing before it (earlyMarks): its list_changed go
// only to a session answered a list before one of the changes, and its
// resources/updated only for a URI whose content changed within the load
// (the changes name it), to a session answered a read so. Load failures
// are reported by whoever drives the reloads (cmd/mcphost, through
// NotifyClients): only it knows about a plugins.toml that failed to parse
// or a plugin whose previous version was kept.
func (srv *Server) flushChanges() {
	srv.chMu.Lock()
	if srv.closed {
		srv.chMu.Unlock()
		return
	}
	srv.flushing.Add(1) // under chMu, so never after Close's Wait began
	defer srv.flushing.Done()
	c := srv.changes
	count := srv.changeCount.Load()
	srv.changes = plugins.Changes{}
	srv.timer = nil
	srv.chMu.Unlock()

	var kinds []string
	for _, k := range c.Kinds() {
		kinds = append(kinds, "notifications/"+k+"/list_changed")
	}
	updated := map[string]bool{}
	for _, u := range c.Updated {
		updated[u] = true
	}
	reloaded := map[string]bool{}
	for _, p := range c.Reloaded {
		reloaded[p] = true
	}
	g, release := srv.reg.Acquire()
	defer release()
	lk, lu, lr := kinds, updated, reloaded
	if c.Initial { // the initial load: only what listeners may have been answered before it
		lists, reads := srv.early.news(count)
		if !lists {
			lk = nil
		}
		if !reads {
			lu = nil
		}
		lr = nil
	}
	srv.flushListeners(lk, lu, lr, g)
	srv.shareChanges(kinds, c)
	srv.eachSession(func(s *session) {
		if !s.ready.Load() {
			return
		}
		// Taken first: a subscription made in answer to the list_changed
		// below is to the new generation, with nothing to update yet.
		subs := s.subscriptions()
		lists, reads := true, true
		if c.Initial {
			lists, reads = s.early.news(count)
		}
		if lists {
			for _, k := range kinds {
				s.notify(k, nil, nil)
			}
		}
		for _, uri := range subs {
			if c.Initial && updated[uri] && reads || !c.Initial && (updated[uri] || reloaded[owner(g, uri)]) {
				s.notify("notifications/resources/updated", uriJSON(uri), nil)
			}
		}
	})
}

// flushListeners is flushChanges for the stateless era: each kind that
// changed, and resources/updated for each subscribed URI that a change
// names or whose plugin was reloaded.
func (srv *Server) flushListeners(kinds []string, updated, reloaded map[string]bool, g *plugins.Generation) {
	for _, k := range kinds {
		srv.notifyListeners(k, nil)
	}
	srv.mu.Lock()
	var uris []string
	for l := range srv.listeners {
		for u := range l.uris {
			if updated[u] || reloaded[owner(g, u)] {
				uris = append(uris, u)
			}
		}
	}
	srv.mu.Unlock()
	seen := map[string]bool{}
	for _, u := range uris {
		if !seen[u] {
			seen[u] = true
			srv.notifyListeners("notifications/resources/updated", uriJSON(u))
		}
	}
}

// earlyMarks records what was answered before the initial load was done:
// how many changes the server had heard of (+1, so that 0 is "nothing")
// when the first list, and the first resources/read, answered so began.
// A client answered nothing before the load finished has nothing stale:
// its plugins arriving is not a change to it; nor has one answered after
// the last change that a flush reports.
type earlyMarks struct {
	lists, reads atomic.Uint64
}

// answered marks a request answered before the initial load was done: a
// list, or a resources/read; seen is the server's change count read
// before the request acquired its generation. The first mark stays (the
// oldest).
func (e *earlyMarks) answered(seen uint64, list, read bool) {
	if list {
		e.lists.CompareAndSwap(0, seen+1)
	}
	if read {
		e.reads.CompareAndSwap(0, seen+1)
	}
}

// news says whether changes flushed up to change count cur are news to
// the lists and to the reads answered early.
func (e *earlyMarks) news(cur uint64) (lists, reads bool) {
	l, r := e.lists.Load(), e.reads.Load()
	return l != 0 && l-1 < cur, r != 0 && r-1 < cur
}

// subscriptions returns the URIs the session subscribed to, sorted.
func (s *session) subscriptions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.subs))
}

// owner names the plugin that serves uri in g, or "".
func owner(g *plugins.Generation, uri string) string {
	if r := g.Resource(uri); r != nil {
		return r.Plugin.Name
	}
	if t, _ := g.MatchTemplate(uri); t != nil {
		return t.Plugin.Name
	}
	return ""
}

func uriJSON(uri string) []byte {
	b, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return b
}
