package host

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/store"
)

// List changes across replicas. Each replica tells its own listeners of
// its own changes (changes.go), and publishes them on the store's
// "lists" channel; every other replica tells its subscriptions/listen
// listeners too, since a stateless client's next list may reach any
// replica. 2025-era sessions stick to one replica and hear only its
// changes. The initial load is each replica's own news, not shared.

const listsChannel = "lists"

// shareTimeout bounds publishing one flush's changes.
const shareTimeout = 5 * time.Second

// listChange is what a replica publishes after a flush.
type listChange struct {
	From     string   `json:"from"` // the replica, to skip its own
	Kinds    []string `json:"kinds,omitempty"`
	Updated  []string `json:"updated,omitempty"`
	Reloaded []string `json:"reloaded,omitempty"`
}

// shareChanges publishes a flush's changes to the other replicas.
func (srv *Server) shareChanges(kinds []string, c plugins.Changes) {
	if c.Initial || len(kinds) == 0 && len(c.Updated) == 0 && len(c.Reloaded) == 0 {
		return
	}
	b, _ := json.Marshal(listChange{From: srv.replica, Kinds: kinds, Updated: c.Updated, Reloaded: c.Reloaded})
	ctx, cancel := context.WithTimeout(context.Background(), shareTimeout)
	defer cancel()
	if err := srv.opts.Store.Publish(ctx, listsChannel, b); err != nil {
		srv.log.Warn("list change not shared: other replicas' listeners do not hear of it", "err", err)
	}
}

// followLists tells this replica's listeners of the other replicas'
// changes until ctx ends.
func (srv *Server) followLists(ctx context.Context) {
	var once sync.Once
	store.Follow(ctx, srv.opts.Store, store.Follower{
		Message:    func(m store.Message) { srv.remoteChange(m.Payload) },
		Err:        func(err error) { srv.log.Warn("other replicas' list changes not followed", "err", err) },
		Subscribed: func() { once.Do(func() { close(srv.listsReady) }) },
	}, listsChannel)
}

// remoteChange tells this replica's listeners of another's change.
func (srv *Server) remoteChange(payload []byte) {
	var c listChange
	if err := json.Unmarshal(payload, &c); err != nil {
		srv.log.Warn("list change from another replica ignored: not JSON", "err", err)
		return
	}
	if c.From == srv.replica {
		return
	}
	updated := map[string]bool{}
	for _, u := range c.Updated {
		updated[u] = true
	}
	reloaded := map[string]bool{}
	g, release := srv.reg.Acquire()
	if g == nil {
		return // nothing loaded yet: no listener has lists to update
	}
	defer release()
	for _, p := range c.Reloaded {
		reloaded[p] = true
	}
	srv.flushListeners(c.Kinds, updated, reloaded, g)
}
