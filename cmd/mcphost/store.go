package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/store"
)

// openStore opens what replicas share: MCPHOST_STORE, else [server]
// store, else the in-process store. A Redis that does not answer at
// start is logged, not fatal: the replica serves what needs no shared
// state and connects when Redis answers.
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error) {
	url := store.URL(cfg.Server.Store)
	st, err := store.Open(url)
	if err != nil {
		return nil, fmt.Errorf("store (%s or [server] store): %w", store.EnvURL, err)
	}
	if url == "" {
		log.Debug("in-process store: tasks, grants and plugin state are this replica's own; set [server] store to share them")
		return st, nil
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := st.Ping(pctx); err != nil {
		log.Error("store not reachable at start: what needs shared state fails until it answers", "store", store.Redact(url), "err", err)
	} else {
		log.Info("store connected", "store", store.Redact(url))
	}
	return st, nil
}
