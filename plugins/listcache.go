package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// The list cache remembers what each plugin listed when it last loaded,
// keyed by everything the guest can see at load: its code, its name, its
// limits, config, env and mounts (secret names, not values), and the
// runtime. With it a warm start serves every list without compiling (see
// lazy.go). Only [LoaderOptions].ListCacheDir turns it on; an entry whose
// content does not hash to what was recorded when it was written, or that
// does not parse, is ignored and rewritten.

// listCacheFormat changes when the entries' meaning does.
const listCacheFormat = 2 // 2: skills

// listKey names the entry of a plugin: a hash of what its guest can see.
// Secret values stay out of it (a cache file name must not let anyone test
// guesses of a secret); lists that depend on them are caught by the check
// on first use.
func listKey(name, codeSum string, lim sandbox.Limits, strict bool) string {
	secrets := slices.Sorted(maps.Keys(lim.Secrets))
	lim.Secrets = nil
	b, _ := json.Marshal(struct {
		Format        int
		Name, Code    string
		Limits        sandbox.Limits
		SecretNames   []string
		Strict        bool
		HostInterface int
	}{listCacheFormat, name, codeSum, lim, secrets, strict, abi.Version})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (l *Loader) listFile(key string) string { return filepath.Join(l.listDir, key+".json") }

// cachedLists returns the entry for key, or nil.
func (l *Loader) cachedLists(key string) *listEntry {
	if l.listDir == "" {
		return nil
	}
	var e listEntry
	if !l.readEntry(l.listFile(key), &e, "list cache", "the plugin is loaded and listed again") {
		return nil
	}
	if e.Format != listCacheFormat || (e.ABI != 1 && e.ABI != 2) {
		l.log.Warn("list cache entry of another format; the plugin is loaded and listed again", "file", l.listFile(key), "format", e.Format, "abi", e.ABI)
		return nil
	}
	return &e
}

// saveLists writes the entry for key (atomically, its SHA-256 recorded
// beside it; a failure is logged and costs only the next warm start).
func (l *Loader) saveLists(key string, e *listEntry) {
	if l.listDir == "" {
		return
	}
	e.Format = listCacheFormat
	l.writeEntry(l.listFile(key), e)
}

// checkLists is a lazy module's first-use hook: it re-reads the lists from
// the fresh instance and, when they are not what the cache said, rewrites
// the entry and signals a list change so that clients see the real lists.
func (l *Loader) checkLists(c *core, key string, cached *listEntry) func(context.Context, Module) {
	return func(ctx context.Context, m Module) {
		now, err := freshLists(ctx, m, c.name)
		if err != nil {
			l.log.Warn("plugin lists not re-read on first use; the cached lists keep serving", "plugin", c.name, "err", err)
			return
		}
		now.GuestVersion = cached.GuestVersion // not re-read: mcphost_abi_version is fixed by the code
		if now.equal(cached) {
			return
		}
		l.saveLists(key, now)
		if c.signal == nil {
			l.log.Warn("plugin lists differ from the cached ones; they serve from the next load", "plugin", c.name)
			return
		}
		l.log.Info("plugin lists differ from the cached ones; re-reading them", "plugin", c.name)
		c.signal()
	}
}

// freshLists reads the lists of a module just loaded.
func freshLists(ctx context.Context, m Module, name string) (*listEntry, error) {
	g, err := sandbox.NewGuest(m, name)
	if err != nil {
		return nil, err
	}
	ls, err := g.Lists(ctx)
	if err != nil {
		return nil, err
	}
	return &listEntry{ABI: g.ABI(), Lists: *ls}, nil
}
