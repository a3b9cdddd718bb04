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

	"github.com/mcphost/mcphost/internal/cachefile"
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
	// Leftovers are writes in progress, or what a crash left of them
	// (see [RemoveLeftovers]); LeftoverBytes is what they hold.
	Leftovers     int
	LeftoverBytes int64
}

// cacheEntry is one file of a cache directory, or one leftover.
type cacheEntry struct {
	root string // the cache directory it is in
	path string
	size int64
	used time.Time // the modification time: sources touch an entry on every use
}

// scanCache lists the entries below dir, and apart from them its
// leftovers: writes in progress or cut short by a crash
// ([cachefile.IsLeftover]: BuildGo's ".build-*", downloads' ".dl-*",
// wazero's "*.tmp", …) and records whose entry is gone. An entry's record
// ([cachefile.SumFile]) belongs to the entry and is not listed. Nor is the
// SDK that Go builds extract (gobuild/sdk/<hash>/, about 100 KB): a module
// missing some of its files would break every build against it; only the
// leftovers of its extraction are. A dir that does not exist is empty.
func scanCache(dir string) (entries, leftovers []cacheEntry, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == dir {
			return nil
		}
		name := d.Name()
		switch {
		case cachefile.IsLeftover(name):
			if l, ok := leftover(p, d); ok {
				leftovers = append(leftovers, l)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir() && name == sdkDirName:
			ents, _ := os.ReadDir(p)
			for _, e := range ents {
				if cachefile.IsLeftover(e.Name()) {
					if l, ok := leftover(filepath.Join(p, e.Name()), e); ok {
						leftovers = append(leftovers, l)
					}
				}
			}
			return filepath.SkipDir
		case !d.Type().IsRegular():
			return nil
		case cachefile.IsSumFile(name):
			if _, err := os.Lstat(strings.TrimSuffix(p, filepath.Ext(p))); errors.Is(err, fs.ErrNotExist) {
				if l, ok := leftover(p, d); ok {
					leftovers = append(leftovers, l)
				}
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		entries = append(entries, cacheEntry{root: dir, path: p, size: fi.Size(), used: fi.ModTime()})
		return nil
	})
	return entries, leftovers, err
}

// leftover describes the leftover at p (its size is that of every file
// below it); false when it went away meanwhile.
func leftover(p string, d fs.DirEntry) (cacheEntry, bool) {
	fi, err := d.Info()
	if err != nil {
		return cacheEntry{}, false
	}
	l := cacheEntry{path: p, size: fi.Size(), used: fi.ModTime()}
	if d.IsDir() {
		l.size = 0
		filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					l.size += fi.Size()
				}
			}
			return nil
		})
	}
	return l, true
}

// cacheEntries lists the entries below dir (see [scanCache]).
func cacheEntries(dir string) ([]cacheEntry, error) {
	es, _, err := scanCache(dir)
	return es, err
}

// CacheUsage reports the files and bytes of each of dirs, and their
// leftovers.
func CacheUsage(dirs []string) ([]CacheDirUsage, error) {
	out := make([]CacheDirUsage, 0, len(dirs))
	for _, d := range dirs {
		es, ls, err := scanCache(d)
		if err != nil {
			return nil, err
		}
		u := CacheDirUsage{Dir: d, Files: len(es), Leftovers: len(ls)}
		for _, e := range es {
			u.Bytes += e.size
		}
		for _, l := range ls {
			u.LeftoverBytes += l.size
		}
		out = append(out, u)
	}
	return out, nil
}

// LeftoverResult says what [RemoveLeftovers] did.
type LeftoverResult struct {
	Removed int   // leftovers removed
	Freed   int64 // their bytes
	InUse   int   // leftovers kept because a build is writing them
}

// RemoveLeftovers removes the leftovers of dirs (see [scanCache]) last
// changed more than olderThan ago: what a crash or a kill left of a build,
// a download or a compile. A build in progress holds a lock on its
// directory and is never removed; the age keeps the short writes of other
// processes (a download, wazero's compiled code) safe.
func RemoveLeftovers(dirs []string, olderThan time.Duration) (LeftoverResult, error) {
	var res LeftoverResult
	cutoff := time.Now().Add(-olderThan)
	for _, d := range dirs {
		_, ls, err := scanCache(d)
		if err != nil {
			return res, err
		}
		for _, l := range ls {
			if l.used.After(cutoff) {
				continue
			}
			switch removed, err := removeUnlessInUse(l.path); {
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return res, err
			case err != nil:
			case !removed:
				res.InUse++
			default:
				res.Removed++
				res.Freed += l.size
			}
		}
	}
	return res, nil
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
			_ = cachefile.Remove(e.path) // the record goes with its entry
			removeEmptyParents(e.path, e.root)
			res.Removed++
			res.Freed += e.size
			res.Left -= e.size
		}
	}
	return res, nil
}

// removeEmptyParents removes the directories between file and root that
// its removal left empty (the compile cache has one per module).
func removeEmptyParents(file, root string) {
	for d := filepath.Dir(file); d != root && underAny(d, []string{root}); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			return
		}
	}
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

// Check compares sum, the SHA-256 of file's content as just read, with
// what was recorded when file was written into the cache, and removes the
// file (and its record) when they differ or when there is no record: the
// caller fetches it again. Files outside Dirs (a plugin's own path) are
// not the cache's and always pass. The error is a
// *[cachefile.CorruptError] naming the file.
func (c *Cache) Check(file, sum string) error {
	if !underAny(file, c.Dirs()) {
		return nil
	}
	err := cachefile.Check(file, sum)
	if err != nil {
		if rerr := cachefile.Remove(file); rerr != nil {
			c.log.Warn("corrupt cache entry not removed", "file", file, "err", rerr)
		}
	}
	return err
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
