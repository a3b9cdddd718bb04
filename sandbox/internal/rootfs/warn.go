package rootfs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Default rate of escape warnings: the first [DefaultBurst] are all logged,
// then at most one per [DefaultEvery], carrying how many were suppressed.
const (
	DefaultBurst = 10
	DefaultEvery = time.Minute
)

// Warner logs refused escape attempts of one plugin as warnings, rate
// limited so that a hostile guest in a loop cannot flood the log. A Warner
// is safe for concurrent use; all mounts of a plugin share one. Package
// sandbox logs its other refusals (outbound HTTP) through one too.
type Warner struct {
	log    *slog.Logger
	plugin string
	burst  int
	every  time.Duration

	mu         sync.Mutex
	logged     int
	last       time.Time
	suppressed int
}

// NewWarner returns a Warner that logs to log with attribute plugin (none
// when plugin is "", for a log that carries it already). burst and every
// of zero mean the defaults.
func NewWarner(log *slog.Logger, plugin string, burst int, every time.Duration) *Warner {
	if burst <= 0 {
		burst = DefaultBurst
	}
	if every <= 0 {
		every = DefaultEvery
	}
	return &Warner{log: log, plugin: plugin, burst: burst, every: every}
}

// Warn reports one refused operation: op is the call ("open", "symlink", …),
// path the guest path and reason why it was refused.
func (w *Warner) Warn(op, path, reason string) {
	w.Log("filesystem escape refused", slog.String("op", op), slog.String("path", path), slog.String("reason", reason))
}

// Log logs one refusal as a warning with message msg, unless the rate is
// exceeded; the next one logged carries how many were suppressed. The
// plugin attribute comes first when the Warner has one.
func (w *Warner) Log(msg string, attrs ...slog.Attr) {
	if w == nil || w.log == nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	if w.logged >= w.burst && now.Sub(w.last) < w.every {
		w.suppressed++
		w.mu.Unlock()
		return
	}
	w.logged++
	w.last = now
	suppressed := w.suppressed
	w.suppressed = 0
	w.mu.Unlock()

	all := make([]slog.Attr, 0, len(attrs)+2)
	if w.plugin != "" {
		all = append(all, slog.String("plugin", w.plugin))
	}
	all = append(all, attrs...)
	if suppressed > 0 {
		all = append(all, slog.Int("suppressed", suppressed))
	}
	w.log.LogAttrs(context.Background(), slog.LevelWarn, msg, all...)
}
