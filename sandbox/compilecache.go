package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/internal/cachefile"
)

// compileCache is the Engine's on-disk cache of compiled code. wazero
// writes it and checks only part of an entry (a CRC of the machine code,
// not the offsets that say where each function starts), so every module
// gets a directory of its own, <dir>/<key>/ (key: the first half of the
// SHA-256 of its bytes), under a wazero cache that the loads of those
// bytes share while any of their modules is open (so that loading the
// same code again is an in-memory hit, as with one cache for all). The
// entries of that directory are kept honest with internal/cachefile:
// before the first load every entry must hash to what was recorded when
// it was written, or it is removed (and reported) and compiled again;
// after a load every new entry is recorded. An entry found to hash to its
// record is not hashed again while its metadata (size, times, inode)
// stays what it was ([cachefile.VerifyStat]: a rewrite or truncation
// through the file system shows; damage below it does not, which
// docs/security.md says). Beside the compiled code, a
// directory keeps the module as prepared for compiling (prepared.go),
// checked the same way.
//
// When the cache cannot be written (a full or read-only disk, or no
// directory at all), code is compiled in memory: the first failure is
// reported once and every later load of the Engine compiles in memory.
type compileCache struct {
	dir string
	log *slog.Logger

	// prepared names the prepared modules' entries (prepared.go); ""
	// keeps none.
	prepared string

	// unhooked says once that hookCodeFiles failed.
	unhooked sync.Once

	mu     sync.Mutex
	memory bool                 // compile in memory from now on (said once)
	open   map[string]*cacheUse // by key, while a module uses it
	// witnesses are the entries recorded by this process whose metadata
	// is to be witnessed once it can be trusted (see witness), by when
	// each is due; close waits for those due within witnessAtClose and
	// stops the others.
	witnesses map[*time.Timer]time.Time
	closed    bool
	pending   sync.WaitGroup
	// racy are the windows of the entries' metadata (cachefile.Racy;
	// none in tests): an entry's is witnessed once past its window
	// (plus witnessMargin), when its times show a later write.
	racy          cachefile.RacyWindows
	witnessMargin time.Duration
}

// witness has f's metadata recorded beside its sum (cachefile.VerifyStat,
// which hashes it once more) once its times can be trusted (100 ms after
// its write where times have fractions of a second, 2 s elsewhere), so
// that the next start's check does not hash it (≈ 15–20 ms of a 4 MB Go
// guest's first call). A process that ends first waits for it at close,
// up to witnessAtClose; past that the next start hashes the entry.
func (c *compileCache) witness(f string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	st, ok := cachefile.StatOf(f)
	if !ok {
		return
	}
	var t *time.Timer
	c.pending.Add(1)
	wait := c.racy.Until(st, time.Now()) + c.witnessMargin
	t = time.AfterFunc(wait, func() {
		defer c.pending.Done()
		c.mu.Lock()
		_, run := c.witnesses[t]
		delete(c.witnesses, t)
		c.mu.Unlock()
		if run {
			_ = cachefile.VerifyStat(f, c.racy) // a failure costs the next start a hash
		}
	})
	if c.witnesses == nil {
		c.witnesses = map[*time.Timer]time.Time{}
	}
	c.witnesses[t] = time.Now().Add(wait)
}

// witnessAtClose is how long close waits for a witness to fall due: an
// entry compiled just before exit (a cold start's last background
// compile) is witnessed then, or the next start hashes it (≈ 15 ms of
// CPU for a 4 MB Go guest's code, in its first call).
const witnessAtClose = 300 * time.Millisecond

// close stops the witnesses not due within witnessAtClose and waits for
// the others, and for those running.
func (c *compileCache) close() {
	c.mu.Lock()
	c.closed = true
	for t, due := range c.witnesses {
		if time.Until(due) > witnessAtClose && t.Stop() {
			delete(c.witnesses, t)
			c.pending.Done()
		}
	}
	c.mu.Unlock()
	c.pending.Wait()
}

// cacheUse is the cache of one module's code: the wazero cache to compile
// through (nil: in memory) and the directory it writes.
type cacheUse struct {
	c     *compileCache
	key   string
	dir   string
	cache wazero.CompilationCache
	refs  int // guarded by c.mu
	// compiling is held by each compile through this cache (Engine.compile).
	compiling sync.Mutex
}

// newCompileCache prepares dir; when it cannot be created the cache is in
// memory from the start, which is said once. Entries of wazero's own
// layout (wazero-<version>-<arch>-<os>/ directly below dir, written by an
// mcphost before per-module directories, which may still be running) are
// left to the size cap's least-recently-used eviction.
func newCompileCache(dir string, log *slog.Logger) *compileCache {
	c := &compileCache{dir: dir, log: log, open: map[string]*cacheUse{},
		racy: cachefile.Racy, witnessMargin: 10 * time.Millisecond}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.toMemory(err)
	}
	return c
}

// toMemory makes every later load compile in memory, and says so once.
func (c *compileCache) toMemory(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.memory {
		return
	}
	c.memory = true
	c.log.Warn("compile cache cannot be written: compiling in memory until restart (plugins load; each start compiles again)",
		"dir", c.dir, "err", err)
}

func (c *compileCache) inMemory() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.memory
}

// get returns the cache for compiling wasm: the one open for the same
// bytes, or a new one whose entries were checked first. The caller
// releases it with close.
func (c *compileCache) get(wasm []byte, log *slog.Logger) *cacheUse {
	if c.inMemory() {
		return &cacheUse{c: c}
	}
	sum := sha256.Sum256(wasm)
	return c.getKey(hex.EncodeToString(sum[:16]), log)
}

// getKey is get for the code whose key (the first half of its SHA-256,
// hex) is key.
func (c *compileCache) getKey(key string, log *slog.Logger) *cacheUse {
	if c.inMemory() {
		return &cacheUse{c: c}
	}
	c.mu.Lock()
	if u := c.open[key]; u != nil {
		u.refs++
		c.mu.Unlock()
		return u
	}
	c.mu.Unlock()
	u := &cacheUse{c: c, key: key, dir: filepath.Join(c.dir, key), refs: 1}
	u.check(log)
	cache, err := wazero.NewCompilationCacheWithDir(u.dir)
	if err != nil {
		c.toMemory(err)
		return &cacheUse{c: c}
	}
	if err := hookCodeFiles(cache); err != nil {
		c.unhooked.Do(func() {
			c.log.Warn("compiled code loads without huge pages (each first use of a plugin costs more): report this with mcphost's version", "err", err)
		})
	}
	u.cache = cache
	c.mu.Lock()
	if other := c.open[key]; other != nil { // opened meanwhile by another load
		other.refs++
		c.mu.Unlock()
		cache.Close(context.Background())
		return other
	}
	c.open[key] = u
	c.mu.Unlock()
	return u
}

// preparedPrefix starts the name of a prepared module's entry.
const preparedPrefix = "prepared-"

// isPrepared reports whether an entry's file name is a prepared module's.
func isPrepared(name string) bool { return strings.HasPrefix(name, preparedPrefix) }

// drop makes the next get for u's key open a new cache.
func (u *cacheUse) drop() {
	u.c.mu.Lock()
	if u.c.open[u.key] == u {
		delete(u.c.open, u.key)
	}
	u.c.mu.Unlock()
}

// config is rc compiling through u.
func (u *cacheUse) config(rc wazero.RuntimeConfig) wazero.RuntimeConfig {
	if u.cache == nil {
		return rc
	}
	return rc.WithCompilationCache(u.cache)
}

// entries lists the compiled code below u.dir: what is neither a record
// nor a leftover.
func (u *cacheUse) entries() []string {
	var out []string
	filepath.WalkDir(u.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !cachefile.IsSumFile(d.Name()) && !cachefile.IsLeftover(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// check removes every entry of compiled code that does not hash to its
// record (or whose metadata changed since it last did:
// [cachefile.VerifyStat]), saying so with the file's name. Prepared
// modules are not hashed here: the one a load uses is checked as it is
// read (readPrepared), and other builds' are never read.
func (u *cacheUse) check(log *slog.Logger) {
	for _, f := range u.entries() {
		if isPrepared(filepath.Base(f)) {
			continue
		}
		err := cachefile.VerifyStat(f, u.c.racy)
		var ce *cachefile.CorruptError
		if !errors.As(err, &ce) {
			continue
		}
		if rerr := cachefile.Remove(f); rerr != nil {
			log.Warn("compile cache entry failed its check and was not removed", "file", f, "err", err, "remove_err", rerr)
			continue
		}
		log.Warn("compile cache entry failed its check: removed, compiling again", "file", f, "err", err)
	}
}

// fault reports whether err, from a compile through u, is the cache's
// fault rather than the module's, and deals with it: a write that failed
// turns the cache to memory; an entry wazero refused is removed. Either
// way the caller releases u and compiles once more (through
// [compileCache.get]).
func (u *cacheUse) fault(err error, log *slog.Logger) bool {
	switch {
	case u.cache == nil:
		return false
	case isWriteFault(err) && errors.Is(err, fs.ErrNotExist):
		// The module's directory went (a prune found it empty): a new
		// cache makes it again.
		u.drop()
		return true
	case isWriteFault(err):
		u.c.toMemory(err)
		u.drop()
		return true
	case isEntryFault(err):
		u.drop()
		for _, f := range u.entries() {
			cachefile.Remove(f)
			log.Warn("compile cache entry refused by wazero: removed, compiling again", "file", f, "err", err)
		}
		return true
	}
	return false
}

// isWriteFault: compiling touches no file but the cache's, so a file
// error from it is the cache failing to write (or read) an entry.
func isWriteFault(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}

// isEntryFault: wazero found an entry it cannot use (its own checks: the
// header, the CRC of the machine code).
func isEntryFault(err error) bool {
	return strings.Contains(err.Error(), "compilationcache:")
}

// record records every entry compiled by this load that has no record
// yet. A record that cannot be written turns the cache to memory: an
// entry without one would be compiled again at every start.
func (u *cacheUse) record() {
	if u.cache == nil {
		return
	}
	for _, f := range u.entries() {
		if cachefile.Recorded(f) != "" {
			continue
		}
		sum, err := cachefile.SumOf(f)
		if err == nil {
			err = cachefile.Record(f, sum)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			u.c.toMemory(err)
			return
		}
		if err == nil {
			u.c.witness(f)
		}
	}
}

// close releases u; the last release closes the wazero cache, once
// nothing compiled through it runs.
func (u *cacheUse) close(ctx context.Context) error {
	if u.cache == nil {
		return nil
	}
	u.c.mu.Lock()
	u.refs--
	last := u.refs == 0
	if last && u.c.open[u.key] == u {
		delete(u.c.open, u.key)
	}
	u.c.mu.Unlock()
	if !last {
		return nil
	}
	return u.cache.Close(ctx)
}
