package watch

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// watchRig runs a Watcher over real files and hands its batches to the test.
type watchRig struct {
	w       *Watcher
	batches chan []string
}

// batchTimeout bounds the wait for a batch that must come; it is a
// failure bound, never a synchronisation delay.
const batchTimeout = 30 * time.Second

func startWatcher(t *testing.T, paths ...string) *watchRig {
	t.Helper()
	w, err := NewWatcher(WatcherOptions{Debounce: 50 * time.Millisecond, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Set(paths); err != nil {
		t.Fatal(err)
	}
	r := &watchRig{w: w, batches: make(chan []string, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx, func(_ context.Context, b []string) { r.batches <- b })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// next returns the next batch, naming the step that waits for it.
func (r *watchRig) next(t *testing.T, step string) []string {
	t.Helper()
	select {
	case b := <-r.batches:
		return b
	case <-time.After(batchTimeout):
		t.Fatalf("%s: no batch within %v (watching %q)", step, batchTimeout, r.w.Dirs())
		return nil
	}
}

// TestWatcher goes through every kind of watched path with real file
// operations. Each step's batch must be exactly what it changed: a step
// that leaked an irrelevant event (or a Chmod) into a batch, or produced
// two batches, fails the next comparison.
func TestWatcher(t *testing.T) {
	root := t.TempDir()
	p := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(p("src", "echo"), 0o755))
	write(t, p("plugins.toml"), "# v1")
	write(t, p("a.wasm"), "v1")
	write(t, p("src", "echo", "main.go"), "package main")
	r := startWatcher(t, p("plugins.toml"), p("a.wasm"), p("src", "echo"), p("drop", "ins"))

	steps := []struct {
		name string
		do   func()
		want []string // nil: checked by the step itself
		has  string   // the batch must contain this path
	}{
		{"plugins.toml edited in place", func() { write(t, p("plugins.toml"), "# v2") }, []string{p("plugins.toml")}, ""},
		{".wasm replaced by rename", func() {
			write(t, p("a.wasm.tmp"), "v2")
			must(os.Rename(p("a.wasm.tmp"), p("a.wasm")))
		}, []string{p("a.wasm")}, ""},
		{".wasm written in place", func() { write(t, p("a.wasm"), "v3") }, []string{p("a.wasm")}, ""},
		{"chmod is ignored", func() {
			must(os.Chmod(p("a.wasm"), 0o600))
			write(t, p("plugins.toml"), "# v3")
		}, []string{p("plugins.toml")}, ""},
		{"Go source edited, editor files ignored", func() {
			write(t, p("src", "echo", ".main.go.swp"), "x")
			write(t, p("src", "echo", "main.go~"), "package main")
			write(t, p("src", "echo", "main.go"), "package main // v2")
			write(t, p("src", "echo", "go.sum"), "")
		}, []string{p("src", "echo", "go.sum"), p("src", "echo", "main.go")}, ""},
		{"drop-in directory created after start", func() {
			must(os.MkdirAll(p("drop", "ins"), 0o755))
			write(t, p("drop", "ins", "x.wasm"), "x")
		}, nil, p("drop")},
		{"file added to the new directory", func() { write(t, p("drop", "ins", "y.wasm"), "y") }, []string{p("drop", "ins", "y.wasm")}, ""},
		{"file removed from it", func() { must(os.Remove(p("drop", "ins", "y.wasm"))) }, []string{p("drop", "ins", "y.wasm")}, ""},
		{"Go source directory replaced", func() {
			must(os.Rename(p("src", "echo"), p("src", "old")))
			must(os.MkdirAll(p("src", "echo"), 0o755))
		}, nil, p("src", "echo")},
		{"a file in the replacing directory", func() { write(t, p("src", "echo", "main.go"), "package main // v3") }, []string{p("src", "echo", "main.go")}, ""},
	}
	for _, st := range steps {
		st.do()
		got := r.next(t, st.name)
		switch {
		case st.want != nil && !reflect.DeepEqual(got, st.want):
			t.Errorf("%s: got batch %q; want %q", st.name, got, st.want)
		case st.has != "" && !slices.Contains(got, st.has):
			t.Errorf("%s: got batch %q; want it to hold %s", st.name, got, st.has)
		}
	}

	// A new config's paths replace the old ones.
	must(r.w.Set([]string{p("plugins.toml")}))
	if got, want := r.w.Dirs(), []string{root}; !reflect.DeepEqual(got, want) {
		t.Errorf("Dirs after Set: got %q; want %q", got, want)
	}
	write(t, p("src", "echo", "main.go"), "package main // v4") // no longer watched
	write(t, p("plugins.toml"), "# v4")
	if got, want := r.next(t, "after Set"), []string{p("plugins.toml")}; !reflect.DeepEqual(got, want) {
		t.Errorf("after Set: got batch %q; want %q", got, want)
	}
}
