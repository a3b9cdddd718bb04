package host

import (
	"encoding/json"
	"maps"
	"slices"
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
	if srv.timer == nil && !srv.closed {
		srv.timer = time.AfterFunc(srv.coalesce, srv.flushChanges)
	}
}

// flushChanges sends one notification per changed kind to every
// initialized session (for the initial load, only to those answered
// before it finished), and resources/updated to the subscribers of each
// URI whose plugin was reloaded: a URI the changes name, or one that a
// reloaded plugin serves in the current generation (as a resource or
// through one of its templates). Load failures are reported by whoever
// drives the reloads (cmd/mcphost, through NotifyClients): only it knows
// about a plugins.toml that failed to parse or a plugin whose previous
// version was kept.
func (srv *Server) flushChanges() {
	srv.chMu.Lock()
	if srv.closed {
		srv.chMu.Unlock()
		return
	}
	srv.flushing.Add(1) // under chMu, so never after Close's Wait began
	defer srv.flushing.Done()
	c := srv.changes
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
	srv.flushListeners(kinds, updated, reloaded, g)
	srv.shareChanges(kinds, c)
	srv.eachSession(func(s *session) {
		if !s.ready.Load() {
			return
		}
		// Taken first: a subscription made in answer to the list_changed
		// below is to the new generation, with nothing to update yet.
		subs := s.subscriptions()
		// The initial load is news only to a session answered before it:
		// one whose requests waited for it, or came after, has the lists.
		if !c.Initial || s.answeredEarly.Load() {
			for _, k := range kinds {
				s.notify(k, nil, nil)
			}
		}
		for _, uri := range subs {
			if updated[uri] || reloaded[owner(g, uri)] {
				s.notify("notifications/resources/updated", uriJSON(uri), nil)
			}
		}
	})
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
