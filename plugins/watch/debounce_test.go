package watch

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestDebounce(t *testing.T) {
	const quiet, max = 100 * time.Millisecond, time.Second
	type event struct {
		at   time.Duration // since the start
		path string
	}
	tests := []struct {
		name   string
		events []event
		// take delays the receiver: batches are taken no earlier than this.
		take time.Duration
		want []string // "at: paths"
	}{
		{
			name:   "one event",
			events: []event{{0, "a"}},
			want:   []string{"100ms: [a]"},
		},
		{
			name:   "a burst is one batch, deduplicated and sorted",
			events: []event{{0, "b"}, {10 * time.Millisecond, "a"}, {50 * time.Millisecond, "b"}, {140 * time.Millisecond, "c"}},
			want:   []string{"240ms: [a b c]"},
		},
		{
			name:   "two bursts",
			events: []event{{0, "a"}, {50 * time.Millisecond, "a"}, {400 * time.Millisecond, "b"}},
			want:   []string{"150ms: [a]", "500ms: [b]"},
		},
		{
			name: "an endless burst is cut at max",
			events: func() []event {
				var ev []event
				for at := time.Duration(0); at < 1500*time.Millisecond; at += 50 * time.Millisecond {
					ev = append(ev, event{at, "w"})
				}
				return ev
			}(),
			want: []string{"1s: [w]", "1.55s: [w]"},
		},
		{
			name:   "a slow receiver: paths that arrive meanwhile join the batch and restart the wait",
			events: []event{{0, "a"}, {150 * time.Millisecond, "b"}},
			take:   200 * time.Millisecond,
			want:   []string{"250ms: [a b]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				in := make(chan string)
				out := make(chan []string)
				done := make(chan struct{})
				go func() {
					defer close(done)
					Debounce(ctx, in, out, quiet, max)
				}()
				start := time.Now()
				// The sleeps below run on synctest's fake clock: they place the
				// simulated file-system events and reads in time, which is what
				// is under test; nothing waits on real time.
				go func() { // the file system
					for _, e := range tt.events {
						time.Sleep(e.at - time.Since(start))
						in <- e.path
					}
				}()
				var got []string
				time.Sleep(tt.take)
				for len(got) < len(tt.want) {
					batch := <-out
					got = append(got, fmt.Sprintf("%v: %v", time.Since(start), batch))
				}
				synctest.Wait() // every event sent; nothing else may come out
				select {
				case batch := <-out:
					t.Errorf("extra batch %v at %v", batch, time.Since(start))
				default:
				}
				cancel()
				<-done
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %q; want %q", got, tt.want)
				}
			})
		})
	}
}

// TestDebounceStops checks both exits: a closed input and a done context.
func TestDebounceStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := make(chan string)
		done := make(chan struct{})
		go func() {
			defer close(done)
			Debounce(t.Context(), in, make(chan []string), time.Second, time.Minute)
		}()
		in <- "a"
		close(in)
		<-done

		ctx, cancel := context.WithCancel(t.Context())
		done = make(chan struct{})
		go func() {
			defer close(done)
			Debounce(ctx, make(chan string), make(chan []string), time.Second, time.Minute)
		}()
		cancel()
		<-done
	})
}
