package source

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultCacheMax is the size cap cmd/mcphost gives its caches (Go builds,
// downloads and wazero's compiled code together): enough for dozens of
// plugins, small enough not to be noticed on a laptop.
const DefaultCacheMax = 1 << 30

// CacheDirUsage is what one cache directory holds.
type CacheDirUsage struct {
	Dir   string
	Files int
	Bytes int64
}

// cacheEntry is one file of a cache directory.
type cacheEntry struct {
	path string
	size int64
	used time.Time // the modification time: sources touch an entry on every use
}

// cacheEntries lists the entries below dir. Hidden files and directories
// and *.tmp files are writes in progress (BuildGo's and the downloads'
// ".build-*" and ".dl-*", wazero's "*.tmp") and are not entries. Nor is
// the SDK that Go builds extract (gobuild/sdk/<hash>/, about 100 KB): a
// module missing some of its files would break every build against it. A
// dir that does not exist is empty.
func cacheEntries(dir string) ([]cacheEntry, error) {
	var out []cacheEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p != dir && (strings.HasPrefix(d.Name(), ".") || d.IsDir() && d.Name() == sdkDirName) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".tmp") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		out = append(out, cacheEntry{path: p, size: fi.Size(), used: fi.ModTime()})
		return nil
	})
	return out, err
}

// CacheUsage reports the files and bytes of each of dirs.
func CacheUsage(dirs []string) ([]CacheDirUsage, error) {
	out := make([]CacheDirUsage, 0, len(dirs))
	for _, d := range dirs {
		es, err := cacheEntries(d)
		if err != nil {
			return nil, err
		}
		u := CacheDirUsage{Dir: d, Files: len(es)}
		for _, e := range es {
			u.Bytes += e.size
		}
		out = append(out, u)
	}
	return out, nil
}

// PruneResult says what [PruneCache] did.
type PruneResult struct {
	Removed int   // entries removed
	Freed   int64 // their bytes
	InUse   int   // entries that would have gone but are in use
	Left    int64 // bytes left in the caches
}

// PruneCache removes entries of dirs, least recently used first, until
// they hold at most max bytes together (max 0 empties them). It never
// removes an entry in use: one a running mcphost's current generation was
// loaded from (see [Cache.Keep]; a process holds a shared lock on each),
// or a write in progress. Such entries count towards max; the result says
// how many there were.
func PruneCache(dirs []string, max int64) (PruneResult, error) {
	var all []cacheEntry
	var res PruneResult
	for _, d := range dirs {
		es, err := cacheEntries(d)
		if err != nil {
			return res, err
		}
		all = append(all, es...)
	}
	for _, e := range all {
		res.Left += e.size
	}
	slices.SortFunc(all, func(a, b cacheEntry) int { return a.used.Compare(b.used) })
	for _, e := range all {
		if res.Left <= max {
			break
		}
		switch removed, err := removeUnlessInUse(e.path); {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return res, err
		case !removed:
			res.InUse++
		default:
			res.Removed++
			res.Freed += e.size
			res.Left -= e.size
		}
	}
	return res, nil
}

// leases holds a lease on every cache file the latest generation
// was loaded from, so that no PruneCache (in this or another process)
// removes it while it is in use. Files outside the cache directories are
// never leased.
type leases struct {
	mu    sync.Mutex
	files map[string]*os.File
}

// replace leases exactly files (those below one of dirs), releasing the
// others.
func (ls *leases) replace(files []string, dirs []string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	next := map[string]*os.File{}
	for _, f := range files {
		if !underAny(f, dirs) {
			continue
		}
		if h, ok := ls.files[f]; ok {
			next[f] = h
			continue
		}
		if h, err := lease(f); err == nil {
			next[f] = h
		}
	}
	for f, h := range ls.files {
		if _, ok := next[f]; !ok {
			h.Close()
		}
	}
	ls.files = next
}

func underAny(file string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, file); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// CacheOptions configure a [Cache].
type CacheOptions struct {
	// BuildDir is where Go-source plugins are built ([BuildOptions].CacheDir);
	// "" means os.UserCacheDir()/mcphost/build.
	BuildDir string
	// DownloadDir is where [URL] and [OCI] sources keep what they fetched;
	// "" means os.UserCacheDir()/mcphost/download.
	DownloadDir string
	// Max, when positive, caps the build and download directories plus
	// ExtraDirs (such as the sandbox's compilation cache): after every
	// [Cache.Keep], least recently used entries go until they fit (see
	// [PruneCache]). 0 means no cap.
	Max       int64
	ExtraDirs []string
	// Logger receives prunes and their failures; nil means slog.Default().
	Logger *slog.Logger
}

// Cache is the set of cache directories one loader fetches into, and the
// leases on the files its latest generation was loaded from. It is safe
// for concurrent use.
type Cache struct {
	opts   CacheOptions
	log    *slog.Logger
	leases leases
}

// NewCache returns a Cache; it holds no leases until [Cache.Keep].
func NewCache(opts CacheOptions) *Cache {
	opts.ExtraDirs = slices.Clone(opts.ExtraDirs)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Cache{opts: opts, log: log}
}

// BuildDir is the configured build directory ("" for BuildGo's default).
func (c *Cache) BuildDir() string { return c.opts.BuildDir }

// DownloadDir is where url and oci sources keep what they fetched.
func (c *Cache) DownloadDir() string {
	if c.opts.DownloadDir != "" {
		return c.opts.DownloadDir
	}
	if ucd, err := os.UserCacheDir(); err == nil {
		return filepath.Join(ucd, "mcphost", "download")
	}
	return filepath.Join(os.TempDir(), "mcphost-download")
}

// Dirs are the directories under the cap.
func (c *Cache) Dirs() []string {
	build := c.opts.BuildDir
	if build == "" {
		if ucd, err := os.UserCacheDir(); err == nil {
			build = filepath.Join(ucd, "mcphost", "build") // BuildGo's default
		}
	}
	return append([]string{build, c.DownloadDir()}, c.opts.ExtraDirs...)
}

// Keep leases the cache files the latest generation was loaded from
// (files outside Dirs are ignored), releasing the others, and, with a cap,
// evicts what no longer fits.
func (c *Cache) Keep(ctx context.Context, files []string) {
	dirs := c.Dirs()
	c.leases.replace(files, dirs)
	if c.opts.Max <= 0 {
		return
	}
	res, err := PruneCache(dirs, c.opts.Max)
	switch {
	case err != nil:
		c.log.Warn("cache prune failed", "err", err)
	case res.Removed > 0 || res.Left > c.opts.Max:
		c.log.Log(ctx, slog.LevelInfo, "cache pruned", "removed", res.Removed, "freed", res.Freed,
			"left", res.Left, "in_use", res.InUse, "max", c.opts.Max)
	}
}
