package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/internal/cachefile"
)

// The file digest cache. A warm start of many plugins given by path spent
// most of its time reading and hashing their code (100 Go plugins of
// 4.2 MB: 420 MB, ≈ 1.5 s of CPU) only to find the list cache entry it
// had last time. The file digest cache remembers, for each such file, the
// SHA-256 it hashed to and what the file's metadata said then (size,
// modification and change times, inode, device); a start that finds the
// same metadata takes the digest without reading the file, and lists the
// plugin from its list cache entry (never from anything else: a miss
// there reads the file as before).
//
// The metadata only decides what is listed early. What runs is always
// what was hashed: the module's first use reads the file and checks it
// against the digest before compiling it (lazy.go), and a mismatch drops
// the entry and reloads the plugin (a list_changed follows when its lists
// differ). Signatures, consent, the compile cache and the list cache keep
// keying on the digest.
//
// A file rewritten in place with the same size gets a new change time,
// which nobody can set back (touch sets only the modification time); the
// one case metadata misses is a rewrite within the file system's
// timestamp granularity of the moment the entry was recorded. So an entry
// is recorded only for a file whose times are older than the racy window
// when it is hashed (internal/cachefile's stat.go, shared with the
// compile cache's checks), and the rest are hashed again at the next
// start.

// fileDigestFormat changes when the entries' meaning does.
const fileDigestFormat = 1

// fileDigest is the entry of one file.
type fileDigest struct {
	Format int            `json:"format"`
	Path   string         `json:"path"`
	Stat   cachefile.Stat `json:"stat"`
	Sum    string         `json:"sha256"`
	// What loading needs from the code before its first use, read when
	// it was hashed: its function exports, sorted, and whether it is a
	// component.
	Exports   []string `json:"exports"`
	Component bool     `json:"component,omitempty"`
}

func (l *Loader) digestFile(path string) string {
	h := sha256.Sum256([]byte(path))
	return filepath.Join(l.listDir, "files", hex.EncodeToString(h[:16])+".json")
}

// cachedDigest returns the entry for the file at path when its metadata
// is what the entry recorded, or nil.
func (l *Loader) cachedDigest(path string) *fileDigest {
	if l.listDir == "" {
		return nil
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	st, ok := cachefile.StatOf(path)
	if !ok {
		return nil
	}
	var d fileDigest
	if !l.readEntry(l.digestFile(path), &d, "file digest cache", "the plugin's code is read and hashed again") {
		return nil
	}
	if d.Format != fileDigestFormat || d.Path != path || d.Stat != st || len(d.Sum) != 64 {
		return nil // another file, or this one changed: hashed again
	}
	return &d
}

// saveDigest records d for the file at path, whose metadata was st before
// it was read, unless the file changed too recently for its times to be
// trusted (see racyWindow).
func (l *Loader) saveDigest(path string, st cachefile.Stat, d *fileDigest) {
	if l.listDir == "" || st == (cachefile.Stat{}) {
		return
	}
	if l.racy.Racy(st, time.Now()) {
		return
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return
	}
	d.Format, d.Path, d.Stat = fileDigestFormat, path, st
	l.writeEntry(l.digestFile(path), d)
}

// dropDigest removes the entry for the file at path (its first use found
// other code than the entry said).
func (l *Loader) dropDigest(path string) {
	if l.listDir == "" {
		return
	}
	if path, err := filepath.Abs(path); err == nil {
		_ = cachefile.Remove(l.digestFile(path))
	}
}

// readEntry reads the JSON entry file into v, checked against the SHA-256
// recorded beside it; a corrupt entry is removed and said (what names the
// cache, then what follows), an unreadable one said.
func (l *Loader) readEntry(file string, v any, what, then string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	if err := cachefile.Check(file, cachefile.Sum(b)); err != nil {
		_ = cachefile.Remove(file)
		l.log.Warn(what+" entry failed its check: removed; "+then, "file", file, "err", err)
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		l.log.Warn(what+" entry unreadable; "+then, "file", file, "err", err)
		return false
	}
	return true
}

// writeEntry writes v as the JSON entry file (atomically, its SHA-256
// recorded beside it; a failure is said once and costs only the next warm
// start).
func (l *Loader) writeEntry(file string, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(file), 0o700)
	}
	if err == nil {
		if err = cachefile.Record(file, cachefile.Sum(b)); err == nil {
			err = cachefile.WriteFile(file, b)
		}
	}
	if err != nil && !l.listFailed.Swap(true) { // once: a full disk fails every entry
		l.log.Warn("list cache not written; the next start loads plugins again (said once)", "dir", l.listDir, "err", err)
	}
}

// vouched is the metadata the file digest cache vouched for when it gave
// d without the code being read (wasm nil), or zero when the code was read.
func vouched(wasm []byte, d *fileDigest) cachefile.Stat {
	if wasm != nil {
		return cachefile.Stat{}
	}
	return d.Stat
}
