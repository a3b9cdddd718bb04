package watch

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// call is one run of Run's fn: its batch, and why its ctx ended (nil when
// fn returned first).
type call struct {
	batch []string
	cause error
}

// waitCall returns the next call reported on calls, failing t after
// batchTimeout.
func waitCall(t *testing.T, calls <-chan call, step string) call {
	t.Helper()
	select {
	case c := <-calls:
		return c
	case <-time.After(batchTimeout):
		t.Fatalf("%s: no call within %v", step, batchTimeout)
		return call{}
	}
}

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
	wait := func(step string) call { t.Helper(); return waitCall(t, calls, step) }

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

// signalHandler is a slog handler that sends each record's message on ch.
type signalHandler struct{ ch chan<- string }

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h signalHandler) WithGroup(string) slog.Handler            { return h }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	h.ch <- r.Message
	return nil
}

// TestRunFinishesAfterCancel: saves that come faster than a reload takes
// do not starve reloads. The run after a cancelled one is not cancelled by
// a newer batch (the log says so): it finishes, and the newer batch runs
// after it.
func TestRunFinishesAfterCancel(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.wasm"), filepath.Join(dir, "b.wasm"), filepath.Join(dir, "c.wasm")
	logs := make(chan string, 16)
	w, err := NewWatcher(WatcherOptions{Debounce: 20 * time.Millisecond, Logger: slog.New(signalHandler{logs})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Set([]string{a, b, c}); err != nil {
		t.Fatal(err)
	}
	started := make(chan int)
	proceed := make(chan struct{})
	calls := make(chan call, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n := 0
		_ = w.Run(ctx, func(ctx context.Context, batch []string) {
			n++
			switch n {
			case 1: // runs until a newer batch cancels it
				started <- n
				<-ctx.Done()
			case 2: // runs until the test has seen a newer batch pass it by
				started <- n
				select {
				case <-proceed:
				case <-ctx.Done():
				}
			}
			calls <- call{batch, context.Cause(ctx)}
		})
	}()
	defer func() { cancel(); <-done }()
	wait := func(step string) call { t.Helper(); return waitCall(t, calls, step) }
	waitStart := func(n int) {
		t.Helper()
		select {
		case got := <-started:
			if got != n {
				t.Fatalf("run %d started; want %d", got, n)
			}
		case <-time.After(batchTimeout):
			t.Fatalf("run %d did not start", n)
		}
	}
	waitLog := func(prefix string) {
		t.Helper()
		for {
			select {
			case m := <-logs:
				if strings.HasPrefix(m, prefix) {
					return
				}
			case <-time.After(batchTimeout):
				t.Fatalf("no log %q within %v", prefix, batchTimeout)
			}
		}
	}

	write(t, a, "1")
	waitStart(1)
	write(t, b, "1")
	if got := wait("first"); !errors.Is(got.cause, ErrNewerChange) {
		t.Errorf("first run ended by %v; want ErrNewerChange", got.cause)
	}
	waitStart(2)
	write(t, c, "1")
	waitLog("change during a reload that follows a cancelled one: letting it finish")
	close(proceed)
	if got := wait("second"); got.cause != nil || !reflect.DeepEqual(got.batch, []string{a, b}) {
		t.Errorf("second run: batch %q ended by %v; want [a b] run to its end", got.batch, got.cause)
	}
	if got := wait("third"); !reflect.DeepEqual(got.batch, []string{a, b, c}) {
		t.Errorf("third run: batch %q; want the second's paths and c", got.batch)
	}
}
