package cli

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
)

// forwarded are the log messages that also go to clients, as
// notifications/message, while serving: the progress of builds and
// compiles, so a client (and its user) sees why the first lists wait.
var forwarded = map[string]bool{
	"plugin step started":           true,
	"plugin step running":           true,
	"plugin step done":              true,
	"go command found outside PATH": true,
	"plugin build output":           true,
	"plugin build cancelled":        true,
}

// clientLog is a slog.Handler that passes every record on and sends the
// forwarded ones at Info and above to the server's clients (those that
// set a log level; host filters by level).
type clientLog struct {
	slog.Handler
	srv *atomic.Pointer[host.Server]
}

func (h clientLog) Handle(ctx context.Context, r slog.Record) error {
	if srv := h.srv.Load(); srv != nil && r.Level >= slog.LevelInfo && forwarded[r.Message] {
		data := map[string]any{"message": r.Message}
		r.Attrs(func(a slog.Attr) bool {
			v := a.Value.Resolve()
			if d, ok := v.Any().(time.Duration); ok {
				data[a.Key] = d.Round(time.Millisecond).String()
			} else {
				data[a.Key] = v.Any()
			}
			return true
		})
		level := "info"
		if r.Level >= slog.LevelWarn {
			level = "warning"
		}
		srv.NotifyClients(level, "mcphost", data)
	}
	return h.Handler.Handle(ctx, r)
}

func (h clientLog) WithAttrs(as []slog.Attr) slog.Handler {
	return clientLog{h.Handler.WithAttrs(as), h.srv}
}

func (h clientLog) WithGroup(name string) slog.Handler {
	return clientLog{h.Handler.WithGroup(name), h.srv}
}

// warnStartup logs (and tells clients) which plugins are still loading
// when the startup wait runs out: the first lists were answered without
// them, and list_changed follows when they load. It warns a little
// (a tenth of the wait, at most a second) before deadline, so that the
// clients still waiting get the warning before their empty lists. It
// returns when the initial load is done, the warning is given or ctx ends.
func warnStartup(ctx context.Context, deadline time.Time, reg *plugins.Registry, ld *plugins.Loader, srv *host.Server, log *slog.Logger) {
	wait := time.Until(deadline)
	t := time.NewTimer(wait - min(wait/10, time.Second))
	defer t.Stop()
	select {
	case <-reg.Ready():
		return
	case <-ctx.Done():
		if time.Now().Before(deadline) {
			return
		}
	case <-t.C:
	}
	select {
	case <-reg.Ready():
	default:
		busy := ld.Busy()
		msg := "startup wait ran out: the first lists are answered without the plugins still loading; list_changed follows when they load (raise startup_wait in [server] to wait longer)"
		log.Warn(msg, "wait", wait.Round(time.Second), "loading", busy)
		srv.NotifyClients("warning", "mcphost", map[string]any{"message": msg, "wait": wait.Round(time.Second).String(), "loading": busy})
	}
}

// finishBuilds waits, at exit, for the builds of the initial load still
// running (a first start's Go builds take minutes), up to wait, so that
// the next start finds them in the cache instead of building again; it
// says which and for how long. A signal ends the wait (after stdin
// closed: the first; after a signal: the second, which ends the process).
// What a cut-short go build compiled stays in go's own build cache.
func finishBuilds(ctx context.Context, reg *plugins.Registry, ld *plugins.Loader, wait time.Duration, log *slog.Logger) {
	select {
	case <-reg.Ready():
		return
	default:
	}
	var building []string
	for _, b := range ld.Busy() {
		if strings.HasSuffix(b, " (build)") {
			building = append(building, strings.TrimSuffix(b, " (build)"))
		}
	}
	if len(building) == 0 || wait <= 0 {
		return
	}
	log.Info("finishing builds for the cache, so that the next start need not build them again (interrupt to stop now)",
		"plugins", building, "up_to", wait)
	t0 := time.Now()
	t := time.NewTimer(wait)
	defer t.Stop()
	interrupted := make(<-chan struct{})
	if ctx.Err() == nil {
		interrupted = ctx.Done()
	}
	select {
	case <-reg.Ready():
		log.Info("builds finished and stored in the cache", "plugins", building, "dur", time.Since(t0).Round(time.Millisecond))
	case <-t.C:
		log.Warn("builds not finished at exit: the next start builds them again, reusing what go's build cache kept",
			"plugins", building, "err", "--build-wait passed")
	case <-interrupted:
		log.Warn("builds not finished at exit: the next start builds them again, reusing what go's build cache kept",
			"plugins", building, "err", errInterrupted)
	}
}
