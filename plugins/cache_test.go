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

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
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
	entry := "download/url-sha256-" + sha256Hex(wasm) + ".wasm"
	want := []string{entry, entry + ".sha256"} // the entry and its record
	if got := remaining(t, dl, build, extra); !slices.Equal(got, want) {
		t.Errorf("after Build: got %q; want only the entry in use %q", got, want)
	}
	res, err := source.PruneCache([]string{dl}, 0)
	if err != nil || res.InUse != 1 || res.Removed != 0 {
		t.Errorf("prune while in use: got %+v, %v; want the entry kept as in use", res, err)
	}
	// A build that no longer uses it releases it.
	g2, err := l.Build(ctx, config.DefaultConfig(), g)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(ctx)
	if got := remaining(t, dl); len(got) != 0 {
		t.Errorf("after a build without the plugin: got %q; want the entry evicted", got)
	}
}
