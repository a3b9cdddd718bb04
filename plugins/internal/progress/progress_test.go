package progress

import (
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcphost/mcphost/internal/logtest"
)

func TestTrackStep(t *testing.T) {
	tests := []struct {
		name    string
		start   slog.Level
		run     time.Duration
		err     error
		running int    // "plugin step running" lines
		done    string // the level of "plugin step done"
	}{
		{"short debug step stays at debug", slog.LevelDebug, time.Second, nil, 0, "DEBUG"},
		{"long debug step reports at info", slog.LevelDebug, 11 * time.Second, nil, 2, "INFO"},
		{"info step", slog.LevelInfo, 6 * time.Second, nil, 1, "INFO"},
		{"failure is left to the caller", slog.LevelInfo, time.Second, errors.New("boom"), 0, "DEBUG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log, rec := logtest.New()
				done := Track(t.Context(), log, "p", "build", tt.start)
				// The step's duration on synctest's fake clock: this
				// sleep is the step, not a wait for an event.
				time.Sleep(tt.run)
				synctest.Wait()
				done(tt.err)
				out := rec.All()
				if got := rec.Matching(tt.start.String() + " plugin step started plugin=p step=build"); len(got) != 1 {
					t.Errorf("start lines %q; want one at %v in %q", got, tt.start, out)
				}
				if got := rec.Matching("INFO plugin step running plugin=p step=build"); len(got) != tt.running {
					t.Errorf("%d running lines; want %d in %q", len(got), tt.running, out)
				}
				if got := rec.Matching(tt.done + " plugin step done plugin=p step=build"); len(got) != 1 {
					t.Errorf("done lines %q; want one at %s in %q", got, tt.done, out)
				}
			})
		})
	}
	done := Track(t.Context(), nil, "p", "build", slog.LevelInfo) // a nil logger tracks nothing
	done(nil)
}
