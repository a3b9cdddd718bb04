package logtest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Recorder is a slog handler that keeps every record, for tests that
// check what was logged.
type Recorder struct {
	mu      sync.Mutex
	records []string // "LEVEL msg k=v k=v"
}

// New returns a logger whose records the Recorder keeps.
func New() (*slog.Logger, *Recorder) {
	r := &Recorder{}
	return slog.New(r), r
}

// Enabled, WithAttrs, WithGroup and Handle make a Recorder a slog.Handler.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *Recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *Recorder) WithGroup(string) slog.Handler            { return r }

func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", rec.Level, rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "dur" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, b.String())
	r.mu.Unlock()
	return nil
}

// Matching returns the records that start with prefix.
func (r *Recorder) Matching(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.records {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// All returns every record so far.
func (r *Recorder) All() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}
