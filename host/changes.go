package host

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcphost/mcphost/plugins"
)

// onChange is the registry subscription. It only gathers: the flush runs
// on the timer's goroutine, so the registry's Swap never waits on clients.
func (srv *Server) onChange(c plugins.Changes) {
	srv.chMu.Lock()
	defer srv.chMu.Unlock()
	srv.changes.Tools = srv.changes.Tools || c.Tools
	srv.changes.Resources = srv.changes.Resources || c.Resources
	srv.changes.Prompts = srv.changes.Prompts || c.Prompts
	srv.changes.Reloaded = append(srv.changes.Reloaded, c.Reloaded...)
	srv.changes.Updated = append(srv.changes.Updated, c.Updated...)
	if srv.timer == nil {
		srv.timer = time.AfterFunc(srv.coalesce, srv.flushChanges)
	}
}

// flushChanges sends one notification per changed kind to every
// initialized session, resources/updated to the subscribers of each
// updated URI, and reports the new generation's load failures.
func (srv *Server) flushChanges() {
	srv.chMu.Lock()
	c := srv.changes
	srv.changes = plugins.Changes{}
	srv.timer = nil
	srv.chMu.Unlock()

	srv.reportFailures()
	if len(c.Reloaded) > 0 {
		slices.Sort(c.Reloaded)
		srv.log.Info("plugins reloaded", "plugins", slices.Compact(c.Reloaded))
	}
	var kinds []string
	if c.Tools {
		kinds = append(kinds, "notifications/tools/list_changed")
	}
	if c.Resources {
		kinds = append(kinds, "notifications/resources/list_changed")
	}
	if c.Prompts {
		kinds = append(kinds, "notifications/prompts/list_changed")
	}
	slices.Sort(c.Updated)
	updated := slices.Compact(c.Updated)
	srv.eachSession(func(s *session) {
		if !s.ready.Load() {
			return
		}
		for _, k := range kinds {
			s.notify(k, nil, nil)
		}
		for _, uri := range updated {
			if s.subscribed(uri) {
				s.notify("notifications/resources/updated", uriJSON(uri), nil)
			}
		}
	})
}

func uriJSON(uri string) []byte {
	b, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return b
}

// reportFailures tells clients (through Notify) about every plugin that
// failed to load in a generation not reported yet.
func (srv *Server) reportFailures() {
	g, release := srv.reg.Acquire()
	defer release()
	if g == nil {
		return
	}
	srv.chMu.Lock()
	seen := g.ID == srv.lastGen
	srv.lastGen = g.ID
	srv.chMu.Unlock()
	if seen {
		return
	}
	for _, f := range g.Failures {
		cause := "unknown error"
		if f.Err != nil {
			cause = f.Err.Error()
		}
		srv.Notify("error", "mcphost", map[string]string{
			"message": "plugin failed to load",
			"plugin":  f.Plugin,
			"error":   cause,
		})
	}
}
