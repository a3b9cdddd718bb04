package watch

import (
	"context"
	"maps"
	"slices"
	"time"
)

// Debounce gathers the paths received on in into bursts and sends each
// burst on out as one batch, sorted and without duplicates. A burst ends
// when no path has arrived for quiet, or when its first path has waited
// max (so a file that is written without pause still gets reloaded). A
// batch that the receiver has not taken yet keeps gathering: a path that
// arrives meanwhile restarts the quiet wait, so a reload never starts in
// the middle of a burst because the previous reload was slow.
//
// It knows nothing of files or clocks beyond the time package, so tests
// drive it with testing/synctest. It returns when ctx is done or in is
// closed; a batch not sent by then is dropped.
func Debounce(ctx context.Context, in <-chan string, out chan<- []string, quiet, max time.Duration) {
	pending := map[string]struct{}{}
	var (
		first time.Time   // when the pending burst began (zero: none)
		timer *time.Timer // fires when the burst ends
		fire  <-chan time.Time
		send  chan<- []string // out while a batch is ready, else nil
		batch []string
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case p, ok := <-in:
			if !ok {
				return
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			pending[p] = struct{}{}
			wait := min(quiet, max-now.Sub(first))
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire, send = timer.C, nil
		case <-fire:
			fire = nil
			batch = slices.Sorted(maps.Keys(pending))
			send = out
		case send <- batch:
			clear(pending)
			first, send, batch = time.Time{}, nil, nil
		}
	}
}
