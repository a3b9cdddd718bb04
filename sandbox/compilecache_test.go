package sandbox

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/internal/wasmgen"
)

// compiledEntries lists the compiled code below dir: every file that is
// neither a record nor a write in progress.
func compiledEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !cachefile.IsSumFile(d.Name()) && !cachefile.IsLeftover(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// loadOnce loads wasm on a new Engine over dir, calls its "hello" export
// and closes everything; it returns what the Engine logged. It keeps no
// prepared module (loadPrepared).
func loadOnce(t *testing.T, dir string, wasm []byte) *logtest.Recorder {
	t.Helper()
	return loadPrepared(t, dir, "", wasm)
}

// TestCompileCacheHeals: a compiled entry damaged on disk (before or
// after a start verified it) is not used: it is removed, compiled again (with the loop poll, not in the slower
// close-on-done mode) and reported once, naming the file.
func TestCompileCacheHeals(t *testing.T) {
	t.Parallel()
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"}, wasmgen.Func{Name: "spin", Spin: true})
	flip := func(t *testing.T, file string) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, file string)
		warn   string
	}{
		{"truncated", func(t *testing.T, file string) {
			fi, err := os.Stat(file)
			if err == nil {
				err = os.Truncate(file, fi.Size()/2)
			}
			if err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"flipped byte", flip, ""},
		// After a start that verified it and recorded its metadata as a
		// witness (cachefile.VerifyStat): the rewrite changes that.
		{"flipped byte, after a verified start", func(t *testing.T, file string) {
			if err := cachefile.VerifyStat(file, cachefile.RacyWindows{}); err != nil {
				t.Fatal(err)
			}
			flip(t, file)
		}, ""},
		// Damaged and recorded again, so only wazero's own check (a CRC
		// of the machine code) catches it.
		{"flipped byte, recorded", func(t *testing.T, file string) {
			flip(t, file)
			sum, err := cachefile.SumOf(file)
			if err == nil {
				err = cachefile.Record(file, sum)
			}
			if err != nil {
				t.Fatal(err)
			}
		}, "WARN compile cache entry refused by wazero"},
		{"no record", func(t *testing.T, file string) {
			if err := os.Remove(cachefile.SumFile(file)); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			loadOnce(t, dir, wasm)
			files := compiledEntries(t, dir)
			if len(files) != 1 {
				t.Fatalf("cache holds %q; want one entry", files)
			}
			tt.damage(t, files[0])

			rec := loadOnce(t, dir, wasm)
			warns := rec.Matching("WARN")
			want := tt.warn
			if want == "" {
				want = "WARN compile cache entry failed its check"
			}
			if len(warns) != 1 || !strings.HasPrefix(warns[0], want) || !strings.Contains(warns[0], files[0]) {
				t.Errorf("damaged start: warnings %q; want one %q, naming %s", warns, want, files[0])
			}
			if err := cachefile.Verify(files[0]); err != nil {
				t.Errorf("after the damaged start: %v; want the entry compiled again and recorded", err)
			}
			if warns := loadOnce(t, dir, wasm).Matching("WARN"); len(warns) != 0 {
				t.Errorf("next start: warnings %q; want none", warns)
			}
		})
	}
}

// TestCompileCacheShared: loads of the same bytes share one cache while
// one of them is open, so the second is an in-memory hit that neither
// checks nor records the entry again.
func TestCompileCacheShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "shared"})
	e, err := NewEngine(ctx, EngineOptions{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	a, err := e.Load(ctx, "a", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Load(ctx, "b", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	same := e.modules[a] == e.modules[b] && e.modules[a].refs == 2
	e.mu.Unlock()
	if !same {
		t.Errorf("two loads of the same bytes: caches %p and %p; want one, used twice", e.modules[a], e.modules[b])
	}
	a.Close(ctx)
	b.Close(ctx)
	e.cache.mu.Lock()
	left := len(e.cache.open)
	e.cache.mu.Unlock()
	if left != 0 {
		t.Errorf("after both closed: %d caches open; want 0", left)
	}
}

// TestCompileCacheDirGone: a module's directory removed while its cache
// is open (a prune found it empty) is made again; the cache is not taken
// for unwritable.
func TestCompileCacheDirGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"})
	dir := t.TempDir()
	log, rec := logtest.New()
	e, err := NewEngine(ctx, EngineOptions{CacheDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	a, err := e.load(ctx, "a", wasm, Limits{Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	keys, _ := os.ReadDir(dir)
	for _, k := range keys {
		if err := os.RemoveAll(filepath.Join(dir, k.Name())); err != nil {
			t.Fatal(err)
		}
	}
	// The same bytes under close-on-done: the same cache, a new entry.
	b, err := e.load(ctx, "b", wasm, Limits{Instances: 1}, nativeWith(interruptCloseOnDone))
	if err != nil {
		t.Fatalf("load after the directory went: %v", err)
	}
	defer b.Close(ctx)
	if warns := rec.Matching("WARN"); len(warns) != 0 || e.cache.inMemory() {
		t.Errorf("warnings %q, in memory %v; want neither", warns, e.cache.inMemory())
	}
	if files := compiledEntries(t, dir); len(files) != 1 {
		t.Errorf("cache holds %q; want the new entry", files)
	}
}

// TestCompileCacheWitness: the compiled code a load records has its
// metadata witnessed beside its sum once its times can be trusted, so
// that the next start's check does not hash it; an Engine closed first
// leaves that to the next start, and its Close waits for none.
func TestCompileCacheWitness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"})
	witnessed := func(dir string) (n, all int) {
		for _, f := range compiledEntries(t, dir) {
			if isPrepared(filepath.Base(f)) {
				continue
			}
			all++
			if b, err := os.ReadFile(cachefile.SumFile(f)); err == nil && strings.Contains(string(b), "\nstat ") {
				n++
			}
		}
		return n, all
	}
	for _, c := range []struct {
		name   string
		margin time.Duration
		want   bool
	}{{"witnessed", 0, true}, {"due at close", witnessAtClose / 3, true}, {"closed first", time.Hour, false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			e, err := NewEngine(ctx, EngineOptions{CacheDir: dir, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			e.cache.racy, e.cache.witnessMargin = cachefile.RacyWindows{}, c.margin
			m, err := e.Load(ctx, "p", wasm, Limits{Instances: 1})
			if err != nil {
				t.Fatal(err)
			}
			m.Close(ctx)
			if c.margin == 0 {
				e.cache.pending.Wait()
			}
			e.Close(ctx) // waits for a witness due within witnessAtClose
			n, all := witnessed(dir)
			if all == 0 || (n == all) != c.want || (n == 0) == c.want {
				t.Errorf("%d of %d entries witnessed; want all: %v", n, all, c.want)
			}
		})
	}
}
