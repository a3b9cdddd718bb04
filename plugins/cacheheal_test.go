package plugins

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
)

// damages are what a crash or a bad disk does to a cache entry.
var damages = []struct {
	name   string
	damage func(t *testing.T, file string)
}{
	{"truncated", func(t *testing.T, file string) {
		if err := os.Truncate(file, 9); err != nil {
			t.Fatal(err)
		}
	}},
	{"flipped bytes", func(t *testing.T, file string) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// Inside an output string: still a valid module, just not the one
		// that was written.
		i := bytes.Index(b, []byte("fetched"))
		if i < 0 {
			t.Fatal("the module holds no tool name to damage")
		}
		copy(b[i:], "FETCHED")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}},
	{"no record", func(t *testing.T, file string) {
		if err := os.Remove(cachefile.SumFile(file)); err != nil {
			t.Fatal(err)
		}
	}},
}

// TestCacheEntryHeals: a downloaded module damaged in the cache is not
// used; it is removed, fetched again and reported once, naming the file.
func TestCacheEntryHeals(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			wasm := toolModule("fetched")
			var hits atomic.Int64
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Write(wasm)
			}))
			defer srv.Close()
			dir := t.TempDir()
			cache := filepath.Join(dir, "download")
			cfg := parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"web\"\nurl = %q\nsha256 = %q\n", srv.URL+"/p.wasm", sha256Hex(wasm)))
			engine := newEngine(t)
			start := func() *logtest.Recorder {
				t.Helper()
				log, rec := logtest.New()
				l := NewLoader(LoaderOptions{Engine: engine, DownloadCacheDir: cache, HTTPClient: srv.Client(), Logger: log})
				g, err := l.Build(ctx, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close(ctx)
				if got := strings.Join(toolNames(g), ","); got != "web_fetched" || len(g.Failures) != 0 {
					t.Fatalf("got tools %q, failures %v; want web_fetched", got, g.Failures)
				}
				return rec
			}
			start()
			files, _ := filepath.Glob(filepath.Join(cache, "*.wasm"))
			if len(files) != 1 {
				t.Fatalf("download cache holds %q; want one module", files)
			}
			d.damage(t, files[0])

			rec := start()
			warns := rec.Matching("WARN cache entry failed its check")
			if len(warns) != 1 || !strings.Contains(warns[0], files[0]) {
				t.Errorf("damaged start: warnings %q; want one naming %s", warns, files[0])
			}
			if hits.Load() != 2 {
				t.Errorf("damaged start: %d downloads in all; want 2 (fetched again)", hits.Load())
			}
			if err := cachefile.Verify(files[0]); err != nil {
				t.Errorf("after the damaged start: %v; want the entry fetched again and recorded", err)
			}

			rec = start()
			if warns := rec.Matching("WARN"); len(warns) != 0 || hits.Load() != 2 {
				t.Errorf("next start: warnings %q, %d downloads; want none and still 2", warns, hits.Load())
			}
		})
	}
}

// TestListCacheEntryHeals: a list cache entry damaged so that it still
// parses is not served; it is removed, the plugin is loaded and listed
// again, and the damage is reported once.
func TestListCacheEntryHeals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	engine := newEngine(t)
	one := int32(abi.Version)
	file := filepath.Join(dir, "clock.wasm")
	write(t, file, string(wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)))
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "clock", Path: file}}
	start := func() (*Generation, *logtest.Recorder) {
		t.Helper()
		log, rec := logtest.New()
		l := NewLoader(LoaderOptions{Engine: engine, Logger: log, ListCacheDir: listDir})
		g, err := l.Build(ctx, cfg, nil)
		if err != nil || len(g.Failures) > 0 {
			t.Fatalf("Build: %v %v", err, g.Failures)
		}
		t.Cleanup(func() { g.Close(ctx) })
		return g, rec
	}
	start()
	entries, _ := filepath.Glob(filepath.Join(listDir, "*.json"))
	if len(entries) != 1 {
		t.Fatalf("list cache holds %v; want one entry", entries)
	}
	b, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entries[0], bytes.Replace(b, []byte(`"now"`), []byte(`"NOW"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}

	g, rec := start()
	if g.Tool("clock_now") == nil || g.Tool("clock_NOW") != nil {
		t.Errorf("damaged start: tools %q; want clock_now, listed by the plugin", toolNames(g))
	}
	if warns := rec.Matching("WARN list cache entry failed its check"); len(warns) != 1 || !strings.Contains(warns[0], entries[0]) {
		t.Errorf("damaged start: warnings %q; want one naming %s", warns, entries[0])
	}
	_, rec = start()
	if warns := rec.Matching("WARN"); len(warns) != 0 {
		t.Errorf("next start: warnings %q; want none", warns)
	}
}

// TestGoBuildCacheHeals: a cached Go build (gobuild/<key>.wasm) that was
// truncated or changed is not used: it is removed, built again and
// reported once, naming the file.
func TestGoBuildCacheHeals(t *testing.T) {
	needGo(t)
	if raceEnabled {
		t.Skip("compiling a Go guest takes about 30 s under -race; TestCacheEntryHeals covers the same check")
	}
	ctx := context.Background()
	dir := t.TempDir()
	buildCache := filepath.Join(dir, "build")
	src, _ := filepath.Abs("source/testdata/goodplugin")
	cfg := parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"g\"\nsource = %q\n", src))
	engine := newEngine(t)
	start := func() *logtest.Recorder {
		t.Helper()
		log, rec := logtest.New()
		l := NewLoader(LoaderOptions{Engine: engine, BuildCacheDir: buildCache, Logger: log})
		g, err := l.Build(ctx, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close(ctx)
		if got := strings.Join(toolNames(g), ","); got != "g_echo" || len(g.Failures) != 0 {
			t.Fatalf("got tools %q, failures %v; want g_echo", got, g.Failures)
		}
		return rec
	}
	start()
	files, _ := filepath.Glob(filepath.Join(buildCache, "*.wasm"))
	if len(files) != 1 {
		t.Fatalf("build cache holds %q; want one module", files)
	}
	if err := os.Truncate(files[0], 1000); err != nil {
		t.Fatal(err)
	}
	rec := start()
	if warns := rec.Matching("WARN cache entry failed its check"); len(warns) != 1 || !strings.Contains(warns[0], files[0]) {
		t.Errorf("damaged start: warnings %q; want one naming %s", warns, files[0])
	}
	if err := cachefile.Verify(files[0]); err != nil {
		t.Errorf("after the damaged start: %v; want the module built again and recorded", err)
	}
	if warns := start().Matching("WARN"); len(warns) != 0 {
		t.Errorf("next start: warnings %q; want none", warns)
	}
}

// TestBadFileSaysWhatItIs: a file given as path = "….wasm" that is not a
// loadable module fails with what it is and where it is, not with the
// decoder's words alone.
func TestBadFileSaysWhatItIs(t *testing.T) {
	module := toolModule("fine")
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"text", []byte("this is a README, not a plugin\n"), "not a WebAssembly module"},
		{"truncated", module[:len(module)/2], "truncated or incomplete WebAssembly module"},
		{"component of another version", []byte("\x00asm\x0e\x00\x01\x00"), "a WebAssembly component of an unsupported binary version"},
	}
	engine := newEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "x.wasm")
			write(t, file, string(tt.data))
			cfg := parseTOML(t, dir, "[[plugin]]\nname = \"x\"\npath = \"x.wasm\"\n")
			l := NewLoader(LoaderOptions{Engine: engine, Logger: discard()})
			g, err := l.Build(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(context.Background())
			if err := g.Failed("x"); err == nil || !strings.Contains(err.Error(), file+": "+tt.want) {
				t.Errorf("got %v; want %q naming %s", err, tt.want, file)
			}
		})
	}
}

// TestListCacheUnwritable: a list cache that cannot be written (here its
// directory is a file) costs only the next warm start, and is said once
// however many plugins load.
func TestListCacheUnwritable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	write(t, listDir, "a file where the directory should be")
	cfg := config.DefaultConfig()
	for _, name := range []string{"one", "two", "three"} {
		file := filepath.Join(dir, name+".wasm")
		write(t, file, string(toolModule(name)))
		cfg.Plugins = append(cfg.Plugins, config.Spec{Name: name, Path: file})
	}
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: log, ListCacheDir: listDir})
	g, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	if len(g.Failures) != 0 || len(toolNames(g)) != 3 {
		t.Errorf("got tools %q, failures %v; want all three plugins", toolNames(g), g.Failures)
	}
	if warns := rec.Matching("WARN"); len(warns) != 1 || !strings.Contains(warns[0], "list cache not written") {
		t.Errorf("warnings %q; want one saying the list cache is not written", warns)
	}
}
