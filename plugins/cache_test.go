package plugins

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cacheFile writes size bytes to dir/name, last used age ago.
func cacheFile(t *testing.T, dir, name string, size int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p, strings.Repeat("x", size))
	when := time.Now().Add(-age)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
	return p
}

func remaining(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(filepath.Dir(d), p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	slices.Sort(out)
	return out
}

func TestPruneCache(t *testing.T) {
	tests := []struct {
		name   string
		max    int64
		leased bool
		want   []string
		res    PruneResult
	}{
		{"under the cap", 1000, false,
			[]string{"a/.build-1/plugin.wasm", "a/new", "a/old", "a/sdk/0123/go.mod", "b/k.tmp", "b/sub/mid"}, PruneResult{Left: 300}},
		{"oldest first", 250, false,
			[]string{"a/.build-1/plugin.wasm", "a/new", "a/sdk/0123/go.mod", "b/k.tmp", "b/sub/mid"}, PruneResult{Removed: 1, Freed: 100, Left: 200}},
		{"leased entry stays", 0, true,
			[]string{"a/.build-1/plugin.wasm", "a/old", "a/sdk/0123/go.mod", "b/k.tmp"}, PruneResult{Removed: 2, Freed: 200, InUse: 1, Left: 100}},
		{"empty the caches", 0, false,
			[]string{"a/.build-1/plugin.wasm", "a/sdk/0123/go.mod", "b/k.tmp"}, PruneResult{Removed: 3, Freed: 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
			old := cacheFile(t, a, "old", 100, 3*time.Hour)
			cacheFile(t, b, "sub/mid", 100, 2*time.Hour)
			cacheFile(t, a, "new", 100, time.Hour)
			cacheFile(t, a, ".build-1/plugin.wasm", 500, 4*time.Hour) // a build in progress
			cacheFile(t, b, "k.tmp", 500, 4*time.Hour)                // wazero writing
			cacheFile(t, a, "sdk/0123/go.mod", 500, 5*time.Hour)      // the extracted SDK: never an entry
			if tt.leased {
				f, err := lease(old)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
			}
			res, err := PruneCache([]string{a, b, filepath.Join(root, "missing")}, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if res != tt.res {
				t.Errorf("result: got %+v; want %+v", res, tt.res)
			}
			if got := remaining(t, a, b); !slices.Equal(got, tt.want) {
				t.Errorf("left: got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestCacheUsage(t *testing.T) {
	root := t.TempDir()
	cacheFile(t, root, "x/1", 10, 0)
	cacheFile(t, root, "x/2", 20, 0)
	cacheFile(t, root, "x/.dl-3", 40, 0)
	got, err := CacheUsage([]string{filepath.Join(root, "x"), filepath.Join(root, "none")})
	if err != nil {
		t.Fatal(err)
	}
	want := []CacheDirUsage{{filepath.Join(root, "x"), 2, 30}, {filepath.Join(root, "none"), 0, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

// TestLoaderCacheCap builds with a cap smaller than anything: every cache
// entry goes except the one the generation was loaded from, which is in
// use, also for a second process's prune (a PruneCache call here).
func TestLoaderCacheCap(t *testing.T) {
	ctx := context.Background()
	wasm := toolModule("capped")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(wasm) }))
	defer srv.Close()
	dir := t.TempDir()
	dl, build, extra := filepath.Join(dir, "download"), filepath.Join(dir, "build"), filepath.Join(dir, "wazero")
	cacheFile(t, dl, "url-sha256-stale.wasm", 10, time.Hour)
	cacheFile(t, build, "stale.wasm", 10, time.Hour)
	cacheFile(t, extra, "compiled", 10, time.Hour)
	cfg := parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"c\"\nurl = %q\nsha256 = %q\n", srv.URL+"/c.wasm", sha256Hex(wasm)))
	l := NewLoader(LoaderOptions{Engine: newEngine(t), BuildCacheDir: build, DownloadCacheDir: dl, HTTPClient: srv.Client(),
		CacheMax: 1, CacheDirs: []string{extra}, Logger: discard()})
	g, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	if got := toolNames(g); len(got) != 1 {
		t.Fatalf("tools: got %q, failures %v; want c_capped", got, g.Failures)
	}
	want := []string{"download/url-sha256-" + sha256Hex(wasm) + ".wasm"}
	if got := remaining(t, dl, build, extra); !slices.Equal(got, want) {
		t.Errorf("after Build: got %q; want only the entry in use %q", got, want)
	}
	res, err := PruneCache([]string{dl}, 0)
	if err != nil || res.InUse != 1 || res.Removed != 0 {
		t.Errorf("prune while in use: got %+v, %v; want the entry kept as in use", res, err)
	}
	// A build that no longer uses it releases it.
	g2, err := l.Build(ctx, DefaultConfig(), g)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(ctx)
	if got := remaining(t, dl); len(got) != 0 {
		t.Errorf("after a build without the plugin: got %q; want the entry evicted", got)
	}
}
