package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults of [WatcherOptions].
const (
	DefaultDebounce = 100 * time.Millisecond
	// MaxDelayFactor bounds a burst: MaxDelay defaults to this many
	// Debounce periods.
	MaxDelayFactor = 20
)

// WatcherOptions configure a [Watcher].
type WatcherOptions struct {
	// Debounce is how long the files must stay quiet before a burst of
	// changes is reported as one batch (default 100ms). An editor's save,
	// a `cp` or a `go build -o` writes in several steps; reloading after
	// the first would read half a file.
	Debounce time.Duration
	// MaxDelay bounds how long a burst that never goes quiet is held back
	// (default 20 × Debounce).
	MaxDelay time.Duration
	// Logger receives watch problems (a directory that cannot be watched,
	// an overflowing event queue). nil means slog.Default().
	Logger *slog.Logger
}

// Watcher reports changes to a set of paths (plugins watch what config.Config.WatchPaths returns) as
// debounced batches. It watches the parent directory of every path, and
// every path that is a directory, so that it sees files replaced by
// rename, created, or removed; a path whose directory does not exist yet is
// watched through its nearest existing ancestor until it appears.
// Chmod-only events are ignored.
//
// A Watcher never gives up: a directory it cannot watch is logged and
// retried at the next change of the set or of the directories above it.
type Watcher struct {
	fsw  *fsnotify.Watcher
	opts WatcherOptions
	log  *slog.Logger

	mu  sync.Mutex // guards set and changes to fsw's watch list
	set watchSet

	closeOnce sync.Once
	closeErr  error
}

// NewWatcher returns a Watcher that watches nothing yet; call
// [Watcher.Set], then [Watcher.Run]. Close it when done.
func NewWatcher(opts WatcherOptions) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.MaxDelay < opts.Debounce {
		opts.MaxDelay = MaxDelayFactor * opts.Debounce
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return &Watcher{fsw: fsw, opts: opts, log: opts.Logger}, nil
}

// Set replaces the watched paths. Paths may be relative (to the working
// directory) and need not exist. The error reports directories that could
// not be watched (for example when the system's inotify watch limit is
// reached); the others are watched regardless.
func (w *Watcher) Set(paths []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set = newWatchSet(paths)
	return w.sync()
}

// Paths returns the paths last given to [Watcher.Set].
func (w *Watcher) Paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.set.targets)
}

// Dirs returns the directories watched now, sorted.
func (w *Watcher) Dirs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.fsw.WatchList()
	slices.Sort(d)
	return d
}

// sync makes the watch list match the set's directories as they exist
// now. w.mu must be held.
//
// The directories to watch are computed from the file system, which keeps
// changing while watches are added: a directory can vanish between the
// stat and the add, and a deeper one can appear just before the watch on
// its parent starts (mkdir -p a/b: a watch added on a after b was created
// never hears of b). Either way nothing would ever tell us again, so sync
// looks once more after every round that added a watch, until a round
// finds the set stable.
func (w *Watcher) sync() error {
	const maxRounds = 16 // more than the depth of any path that appears at once in practice
	var errs []error
	for range maxRounds {
		errs = errs[:0]
		want, have := w.set.dirs(), w.fsw.WatchList()
		for _, d := range have {
			if !slices.Contains(want, d) {
				_ = w.fsw.Remove(d) // fails when the directory is gone, which removed the watch anyway
			}
		}
		added, vanished := false, false
		for _, d := range want {
			if slices.Contains(have, d) {
				continue
			}
			if err := w.fsw.Add(d); errors.Is(err, fs.ErrNotExist) {
				vanished = true
			} else if err != nil {
				errs = append(errs, fmt.Errorf("watch %s: %w", d, err))
			} else {
				added = true
			}
		}
		if !vanished && (!added || slices.Equal(want, w.set.dirs())) {
			break
		}
	}
	return errors.Join(errs...)
}

// Run reports batches of changed paths to fn until ctx is done, then
// returns ctx's error. Batches never overlap: one fn runs at a time. A
// batch that is ready while fn runs cancels fn's ctx (a newer save makes
// the build or load under way stale), unless fn's run follows one that
// was cancelled: that one runs to its end, so saves that come faster
// than a reload takes (an editor's autosave on a loaded machine) still
// see reloads land. Once fn returns, the next batch holds the paths of
// both. A path in a batch is a watched path, a file
// inside a watched directory or matching a watched glob, or a directory
// above a watched path.
func (w *Watcher) Run(ctx context.Context, fn func(ctx context.Context, paths []string)) error {
	ctx, cancel := context.WithCancel(ctx)
	in := make(chan string)
	out := make(chan []string)
	var wg sync.WaitGroup
	wg.Go(func() { Debounce(ctx, in, out, w.opts.Debounce, w.opts.MaxDelay) })
	wg.Go(func() { w.pump(ctx, in) })
	defer wg.Wait()
	defer cancel()
	var next []string  // the batch to run next
	cancelled := false // the last run was cancelled by a newer batch
	for {
		if next == nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case next = <-out:
			}
		}
		batch := next
		next = nil
		fctx, stop := context.WithCancelCause(ctx)
		done := make(chan struct{})
		go func() { // owned by Run, which waits for done below
			defer close(done)
			fn(fctx, batch)
		}()
	running:
		for {
			select {
			case <-done:
				break running
			case newer := <-out:
				switch {
				case next != nil:
				case cancelled:
					w.log.Info("change during a reload that follows a cancelled one: letting it finish; the next reload includes the change", "trigger", newer)
				default:
					w.log.Info("change during a reload: cancelling it; the next reload includes both", "trigger", newer)
					stop(ErrNewerChange)
				}
				next = merge(next, newer)
			}
		}
		cancelled = context.Cause(fctx) == ErrNewerChange
		stop(nil)
		if next != nil {
			next = merge(batch, next)
		}
	}
}

// ErrNewerChange is the cause of a reload's ctx cancelled by a newer batch
// of changes (see [Watcher.Run]).
var ErrNewerChange = errors.New("a newer change came in")

// merge returns the sorted union of two sorted batches.
func merge(a, b []string) []string {
	m := slices.Concat(a, b)
	slices.Sort(m)
	return slices.Compact(m)
}

// pump turns fsnotify's events into relevant paths on in, keeping the
// watch list in step with directories that appear and disappear.
func (w *Watcher) pump(ctx context.Context, in chan<- string) {
	for {
		var path string
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || ev.Op == 0 {
				continue
			}
			w.mu.Lock()
			if ev.Op.Has(fsnotify.Create) || ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename) {
				if err := w.sync(); err != nil {
					w.log.Warn("watch", "err", err)
				}
			}
			if w.set.relevant(ev.Name) {
				path = ev.Name
			}
			w.mu.Unlock()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.log.Warn("watch", "err", err)
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				continue
			}
			// Events were lost: report every target, so a reload looks.
			w.mu.Lock()
			targets := slices.Clone(w.set.targets)
			w.mu.Unlock()
			for _, t := range targets {
				select {
				case in <- t:
				case <-ctx.Done():
					return
				}
			}
		}
		if path == "" {
			continue
		}
		select {
		case in <- path:
		case <-ctx.Done():
			return
		}
	}
}

// Close stops watching. It is idempotent.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() { w.closeErr = w.fsw.Close() })
	return w.closeErr
}
