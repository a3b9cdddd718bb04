package source

import (
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
