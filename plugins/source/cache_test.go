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
			[]string{"a/.build-1/plugin.wasm", "a/new", "a/old", "a/old.sha256", "a/sdk/0123/go.mod", "b/k.tmp", "b/sub/mid"}, PruneResult{Left: 300}},
		{"oldest first", 250, false,
			[]string{"a/.build-1/plugin.wasm", "a/new", "a/sdk/0123/go.mod", "b/k.tmp", "b/sub/mid"}, PruneResult{Removed: 1, Freed: 100, Left: 200}},
		{"leased entry stays", 0, true,
			[]string{"a/.build-1/plugin.wasm", "a/old", "a/old.sha256", "a/sdk/0123/go.mod", "b/k.tmp"}, PruneResult{Removed: 2, Freed: 200, InUse: 1, Left: 100}},
		{"empty the caches", 0, false,
			[]string{"a/.build-1/plugin.wasm", "a/sdk/0123/go.mod", "b/k.tmp"}, PruneResult{Removed: 3, Freed: 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
			old := cacheFile(t, a, "old", 100, 3*time.Hour)
			cacheFile(t, a, "old.sha256", 65, 3*time.Hour) // its record, which goes with it
			cacheFile(t, b, "sub/mid", 100, 2*time.Hour)   // its directory goes with it
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
			if _, err := os.Stat(filepath.Join(b, "sub")); slices.Contains(tt.want, "b/sub/mid") == os.IsNotExist(err) {
				t.Errorf("b/sub: %v; want it gone exactly when its only entry is", err)
			}
		})
	}
}

func TestCacheUsage(t *testing.T) {
	root := t.TempDir()
	x := filepath.Join(root, "x")
	cacheFile(t, x, "1", 10, 0)
	cacheFile(t, x, "1.sha256", 65, 0) // 1's record: part of the entry
	cacheFile(t, x, "2", 20, 0)
	cacheFile(t, x, ".dl-3", 40, 0)
	cacheFile(t, x, ".build-4/plugin.wasm", 100, 0)
	cacheFile(t, x, "k.tmp", 200, 0)
	cacheFile(t, x, "gone.wasm.sha256", 65, 0) // a record whose entry is gone
	cacheFile(t, x, "sdk/0123/go.mod", 500, 0)
	cacheFile(t, x, "sdk/.sdk-5/go.mod", 1000, 0)
	got, err := CacheUsage([]string{x, filepath.Join(root, "none")})
	if err != nil {
		t.Fatal(err)
	}
	want := []CacheDirUsage{{x, 2, 30, 5, 40 + 100 + 200 + 65 + 1000}, {Dir: filepath.Join(root, "none")}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

func TestRemoveLeftovers(t *testing.T) {
	tests := []struct {
		name      string
		olderThan time.Duration
		want      []string
		res       LeftoverResult
	}{
		{"older than an hour", time.Hour,
			[]string{"x/.build-new/plugin.wasm", "x/.build-run/plugin.wasm", "x/1", "x/1.sha256", "x/new.tmp", "x/sdk/0123/go.mod"},
			LeftoverResult{Removed: 4, Freed: 10 + 20 + 40 + 50, InUse: 1}},
		{"any age", 0,
			[]string{"x/.build-run/plugin.wasm", "x/1", "x/1.sha256", "x/sdk/0123/go.mod"},
			LeftoverResult{Removed: 6, Freed: 10 + 20 + 40 + 50 + 1 + 2, InUse: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			x := filepath.Join(root, "x")
			cacheFile(t, x, "1", 1000, 2*time.Hour)
			cacheFile(t, x, "1.sha256", 65, 2*time.Hour)
			cacheFile(t, x, ".build-old/plugin.wasm", 10, 2*time.Hour)
			cacheFile(t, x, "old.tmp", 20, 2*time.Hour)
			cacheFile(t, x, "gone.sha256", 40, 2*time.Hour)
			cacheFile(t, x, "sdk/.sdk-old/go.mod", 50, 2*time.Hour)
			cacheFile(t, x, "sdk/0123/go.mod", 500, 2*time.Hour)
			cacheFile(t, x, ".build-new/plugin.wasm", 1, 0)
			cacheFile(t, x, "new.tmp", 2, 0)
			cacheFile(t, x, ".build-run/plugin.wasm", 4, 2*time.Hour)
			for _, d := range []string{".build-old", ".build-run", "sdk/.sdk-old"} {
				old := time.Now().Add(-2 * time.Hour)
				if err := os.Chtimes(filepath.Join(x, d), old, old); err != nil {
					t.Fatal(err)
				}
			}
			h, err := lease(filepath.Join(x, ".build-run")) // a build still running
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			res, err := RemoveLeftovers([]string{x, filepath.Join(root, "none")}, tt.olderThan)
			if err != nil {
				t.Fatal(err)
			}
			if res != tt.res {
				t.Errorf("result: got %+v; want %+v", res, tt.res)
			}
			if got := remaining(t, x); !slices.Equal(got, tt.want) {
				t.Errorf("left: got %q; want %q", got, tt.want)
			}
		})
	}
}
