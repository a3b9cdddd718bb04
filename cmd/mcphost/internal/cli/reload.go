package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/metrics"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/store"
)

// manage runs the plugins.Manager over file: the initial load and then,
// when watching, a reload after every change until ctx is done. Each load
// is logged as one line; its errors also go to the clients that set a log
// level, as notifications/message at level "error". met, when not nil,
// counts every load. A plugin's own list change reaches the replicas
// sharing st.
func manage(ctx context.Context, rt *pluginRuntime, reg *plugins.Registry, st store.Store, srv *host.Server, met *metrics.Metrics, file string, watch bool, debounce time.Duration, log *slog.Logger) {
	m := plugins.NewManager(plugins.ManagerOptions{
		Loader: rt.loader, Registry: reg, ConfigFile: file, Watch: watch, Debounce: debounce, Logger: log, Store: st,
		FollowLists: true,
		OnReload: func(rep plugins.ReloadReport) {
			rep.Log(ctx, log)
			if met != nil {
				met.Reloaded(rep)
			}
			notifyErrors(srv, rep)
			notifyLive(srv, reg, rep)
		},
	})
	if err := m.Run(ctx); err != nil {
		log.Error("cannot watch for changes", "err", err)
	}
}

// notifyErrors sends a load's errors to clients. They are logged already:
// the config error by ReloadReport.Log, plugin failures by the loader.
func notifyErrors(srv *host.Server, rep plugins.ReloadReport) {
	if rep.Err != nil {
		srv.NotifyClients("error", "mcphost", map[string]string{
			"message": "plugins.toml not applied; the previous plugins keep serving",
			"error":   rep.Err.Error(),
		})
	}
	for _, f := range rep.Failures {
		msg := "plugin failed to load"
		if f.Kept {
			msg = "plugin failed to reload; its previous version keeps serving"
		}
		srv.NotifyClients("error", "mcphost", map[string]string{
			"message": msg,
			"plugin":  f.Plugin,
			"error":   f.Err.Error(),
		})
	}
}

// notifyLive tells clients, at level info, which plugins serve new code
// after a reload. A save that changes a tool's body but no list sends no
// list_changed, and the author watching a client would otherwise not know
// whether the new code is live yet.
func notifyLive(srv *host.Server, reg *plugins.Registry, rep plugins.ReloadReport) {
	if rep.Initial || rep.Err != nil || len(rep.Changes.Reloaded) == 0 {
		return
	}
	g, release := reg.Acquire()
	defer release()
	for _, name := range rep.Changes.Reloaded {
		if g.Plugin(name) == nil || g.Failed(name) != nil {
			continue // removed, or failed (notifyErrors said so)
		}
		srv.NotifyClients("info", "mcphost", map[string]any{
			"message": "plugin reloaded: its new code is live",
			"plugin":  name,
			"gen":     rep.Gen,
		})
	}
}
