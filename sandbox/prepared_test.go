package sandbox

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/internal/wasmgen"
)

// loadPrepared loads wasm on a new Engine over dir that keeps prepared
// modules under the identity build ("" keeps none), calls its "hello"
// export and closes everything; it returns what the Engine logged.
func loadPrepared(t *testing.T, dir, build string, wasm []byte) *logtest.Recorder {
	t.Helper()
	ctx := context.Background()
	log, rec := logtest.New()
	e, err := NewEngine(ctx, EngineOptions{CacheDir: dir, Logger: log})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	defer e.Close(ctx)
	e.cache.prepared = preparedID(build)
	m, err := e.Load(ctx, "p", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer m.Close(ctx)
	if out, err := m.Call(ctx, "hello", nil); err != nil || string(out) != "hello" {
		t.Fatalf("call: %q, %v; want hello", out, err)
	}
	return rec
}

// preparedFiles lists the prepared modules below dir.
func preparedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range compiledEntries(t, dir) {
		if isPrepared(filepath.Base(f)) {
			out = append(out, f)
		}
	}
	return out
}

// TestPreparedModule: a module compiled through the cache keeps what it
// compiled (merged and instrumented), and the next load compiles that as
// read; another build's entry is not used; an entry that fails its check,
// or that was recorded damaged and does not compile, is removed, said,
// and prepared again.
func TestPreparedModule(t *testing.T) {
	t.Parallel()
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"}, wasmgen.Func{Name: "spin", Spin: true})
	kept := func(rec *logtest.Recorder) bool {
		return slices.ContainsFunc(rec.Matching("DEBUG loop poll"), func(l string) bool { return strings.Contains(l, "prepared=true") })
	}
	truncate := func(t *testing.T, file string, record bool) {
		b, err := os.ReadFile(file)
		if err == nil {
			err = os.WriteFile(file, b[:len(b)/2], 0o600)
		}
		if err == nil && record {
			err = cachefile.Record(file, cachefile.Sum(b[:len(b)/2]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, file string)
		warn   string
	}{
		// Checked as read (readPrepared), not by the compile cache's check.
		{"truncated", func(t *testing.T, file string) { truncate(t, file, false) }, "WARN prepared module failed its check"},
		{"truncated, recorded", func(t *testing.T, file string) { truncate(t, file, true) }, "WARN prepared module does not compile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if rec := loadPrepared(t, dir, "a", wasm); kept(rec) || len(rec.Matching("WARN")) != 0 {
				t.Fatalf("first load: kept %v, warnings %q; want it prepared, silently", kept(rec), rec.Matching("WARN"))
			}
			files := preparedFiles(t, dir)
			if len(files) != 1 || cachefile.Verify(files[0]) != nil {
				t.Fatalf("prepared entries %q; want one, recorded", files)
			}
			if rec := loadPrepared(t, dir, "a", wasm); !kept(rec) || len(rec.Matching("WARN")) != 0 {
				t.Fatalf("second load: kept %v, warnings %q; want the prepared module compiled as read", kept(rec), rec.Matching("WARN"))
			}
			if rec := loadPrepared(t, dir, "b", wasm); kept(rec) || len(preparedFiles(t, dir)) != 2 {
				t.Fatalf("another build: kept %v, entries %q; want its own entry", kept(rec), preparedFiles(t, dir))
			}

			tt.damage(t, files[0])
			rec := loadPrepared(t, dir, "a", wasm)
			if warns := rec.Matching("WARN"); len(warns) != 1 || !strings.HasPrefix(warns[0], tt.warn) || kept(rec) {
				t.Errorf("damaged entry: warnings %q, kept %v; want one %q and the module prepared again", warns, kept(rec), tt.warn)
			}
			if err := cachefile.Verify(files[0]); err != nil {
				t.Errorf("after the damaged load: %v; want the entry written again", err)
			}
			if rec := loadPrepared(t, dir, "a", wasm); !kept(rec) || len(rec.Matching("WARN")) != 0 {
				t.Errorf("next load: kept %v, warnings %q; want the entry used, silently", kept(rec), rec.Matching("WARN"))
			}
		})
	}
}

// TestPreparedIdentity: an Engine keeps prepared modules only when asked,
// named by the executable's Go build ID (which a test binary has too).
func TestPreparedIdentity(t *testing.T) {
	ctx := context.Background()
	id := executableBuildID()
	if runtime.GOOS == "linux" && (id == "" || strings.ContainsAny(id, "\x00\n")) {
		t.Fatalf("build ID %q; want the executable's", id)
	}
	for _, keep := range []bool{false, true} {
		e, err := NewEngine(ctx, EngineOptions{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), KeepPrepared: keep})
		if err != nil {
			t.Fatal(err)
		}
		if want := keep && id != ""; (e.cache.prepared != "") != want || (want && e.cache.prepared != preparedID(id)) {
			t.Errorf("KeepPrepared %v: entry name %q; want one only when kept", keep, e.cache.prepared)
		}
		e.Close(ctx)
	}
	if preparedID("a") == preparedID("b") || !isPrepared(preparedID("a")) {
		t.Errorf("prepared names %q %q; want distinct, recognised", preparedID("a"), preparedID("b"))
	}
}

// TestLoadKept: LoadKept loads, without the bytes, the code a load of
// those bytes kept (its prepared module beside its compiled code), and it
// runs as they do; nothing kept, another build's entry, a digest of other
// bytes or an entry that fails its check is ErrNotKept, and the last is
// removed.
func TestLoadKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"})
	sum := cachefile.Sum(wasm)
	other := cachefile.Sum(wasmgen.Module(wasmgen.Func{Name: "hello", Output: "other"}))
	dir := t.TempDir()
	loadKept := func(build, sum string) (*Module, error) {
		e, err := NewEngine(ctx, EngineOptions{CacheDir: dir, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("NewEngine: %v", err)
		}
		t.Cleanup(func() { e.Close(ctx) })
		e.cache.prepared = preparedID(build)
		return e.LoadKept(ctx, "p", sum, Limits{Instances: 1})
	}
	if _, err := loadKept("b1", sum); err != ErrNotKept {
		t.Fatalf("LoadKept before any load: %v; want ErrNotKept", err)
	}
	loadPrepared(t, dir, "b1", wasm)
	m, err := loadKept("b1", sum)
	if err != nil {
		t.Fatalf("LoadKept after a load: %v", err)
	}
	if out, err := m.Call(ctx, "hello", nil); err != nil || string(out) != "hello" {
		t.Errorf("kept module's call: %q, %v; want hello", out, err)
	}
	m.Close(ctx)
	for _, c := range []struct{ name, build, sum string }{
		{"another build", "b2", sum},
		{"other bytes", "b1", other},
		{"not a digest", "b1", "hello"},
	} {
		if _, err := loadKept(c.build, c.sum); err != ErrNotKept {
			t.Errorf("%s: %v; want ErrNotKept", c.name, err)
		}
	}
	files := preparedFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("prepared modules: %q; want one", files)
	}
	if err := os.WriteFile(files[0], []byte("\x00asm\x01\x00\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKept("b1", sum); err != ErrNotKept {
		t.Errorf("damaged entry: %v; want ErrNotKept", err)
	}
	if _, err := os.Stat(files[0]); err == nil {
		t.Errorf("the damaged entry stayed")
	}
}
