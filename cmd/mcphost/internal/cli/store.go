package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/store"
)

// storeURL is the one place that decides which store a command uses:
// flag (grants --store) when set, else MCPHOST_STORE, else cfg's [server]
// store (cfg may be nil), else "" for the in-process store. serve, call
// (and read, prompt) and grants all resolve it here, so none of them can
// quietly use a different store than the others.
func storeURL(flag string, cfg *config.Config) string {
	if flag != "" {
		return flag
	}
	if cfg == nil {
		return store.URL("")
	}
	return store.URL(cfg.Server.Store)
}

// sharedStore is an open store and what errors and logs call it.
type sharedStore struct {
	store.Store
	url string // as resolved by storeURL; "" for the in-process store
}

// name is how errors name the store, without its password.
func (s *sharedStore) name() string {
	if s.url == "" {
		return "the in-process store"
	}
	return "store " + store.Redact(s.url)
}

// grants are the grants kept in the store, shared by every replica on it;
// nil for the in-process store (grants then live beside plugins.toml).
func (s *sharedStore) grants() *consent.Grants {
	if s.url == "" {
		return nil
	}
	return consent.StoreGrants(s.Store, store.Redact(s.url))
}

// openStore opens the store storeURL(flag, cfg) names. With ping, a
// Redis that does not answer at start is logged, not fatal: the replica
// serves what needs no shared state and connects when Redis answers.
func openStore(ctx context.Context, flag string, cfg *config.Config, log *slog.Logger) (*sharedStore, error) {
	url := storeURL(flag, cfg)
	st, err := store.Open(url)
	if err != nil {
		return nil, fmt.Errorf("store (%s or [server] store): %w", store.EnvURL, err)
	}
	s := &sharedStore{Store: st, url: url}
	if url == "" {
		log.Debug("in-process store: tasks, grants and plugin state are this replica's own; set [server] store to share them")
		return s, nil
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := st.Ping(pctx); err != nil {
		log.Error("store not reachable at start: what needs shared state fails until it answers", "store", store.Redact(url), "err", err)
	} else {
		log.Info("store connected", "store", store.Redact(url))
	}
	return s, nil
}
