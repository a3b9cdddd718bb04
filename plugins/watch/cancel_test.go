package watch

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestRunCancelsOnNewerBatch: a batch that forms while fn runs cancels
// fn's ctx with ErrNewerChange, and once fn returns, the next batch holds
// the paths of both; a batch that comes after fn returned cancels nothing.
func TestRunCancelsOnNewerBatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.wasm"), filepath.Join(dir, "b.wasm")
	w, err := NewWatcher(WatcherOptions{Debounce: 20 * time.Millisecond, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Set([]string{a, b}); err != nil {
		t.Fatal(err)
	}
	type call struct {
		batch []string
		cause error // why fn's ctx ended, nil when fn returned first
	}
	started := make(chan []string)
	calls := make(chan call, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n := 0
		_ = w.Run(ctx, func(ctx context.Context, batch []string) {
			n++
			if n == 1 { // the first runs until a newer batch cancels it
				started <- batch
				<-ctx.Done()
				calls <- call{batch, context.Cause(ctx)}
				return
			}
			calls <- call{batch, nil}
		})
	}()
	defer func() { cancel(); <-done }()
	wait := func(step string) call {
		t.Helper()
		select {
		case c := <-calls:
			return c
		case <-time.After(batchTimeout):
			t.Fatalf("%s: no call within %v", step, batchTimeout)
			return call{}
		}
	}

	write(t, a, "1")
	select {
	case <-started:
	case <-time.After(batchTimeout):
		t.Fatal("no first batch")
	}
	write(t, b, "1")
	if c := wait("first"); !errors.Is(c.cause, ErrNewerChange) || !reflect.DeepEqual(c.batch, []string{a}) {
		t.Errorf("first call: batch %q ended by %v; want [a] ended by ErrNewerChange", c.batch, c.cause)
	}
	if c := wait("second"); !reflect.DeepEqual(c.batch, []string{a, b}) {
		t.Errorf("second call: batch %q; want both paths", c.batch)
	}
	write(t, a, "2")
	if c := wait("third"); !reflect.DeepEqual(c.batch, []string{a}) || c.cause != nil {
		t.Errorf("third call: batch %q, %v; want [a] alone", c.batch, c.cause)
	}
}
