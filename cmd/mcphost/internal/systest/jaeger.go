package systest

import (
	"context"
	"testing"
	"time"
)

// WaitFor polls ok, an external process's state that sends no signal,
// every 100 ms until ctx ends.
func WaitFor(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
