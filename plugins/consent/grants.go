package consent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/internal/opfile"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// GrantsFileName is the file, beside plugins.toml, that holds what a
// person allowed for good (an allow_always answer). No plugin
// may mount it writable (config's guard).
const GrantsFileName = config.GrantsFileName

// GrantsFile returns the grants file of the config file configFile.
func GrantsFile(configFile string) string {
	return filepath.Join(filepath.Dir(configFile), GrantsFileName)
}

// Grant is one standing approval: Plugin, running Code, may connect to
// Host, or use the may_request_paths directory Path for Access.
type Grant struct {
	Plugin string `toml:"plugin"`
	// Code is the sha256 of the Wasm the person approved
	// ("sha256:<hex>"), and Signer who signed it, when its spec has a
	// signature table. A grant stands for that code only: other code
	// under the same name is asked again. A grant without Code (written
	// before grants named code) stands for nothing and is replaced by the
	// next answer.
	Code   string `toml:"code,omitempty"`
	Signer string `toml:"signer,omitempty"`
	// Host is "host:port" ("[::1]:443" for IPv6), exactly as the person
	// was asked about it.
	Host string `toml:"host,omitempty"`
	// Path is a may_request_paths host directory, absolute; Access is
	// AccessRead or AccessWrite (which also allows reading).
	Path   string `toml:"path,omitempty"`
	Access string `toml:"access,omitempty"`
	// Granted is when the person answered.
	Granted time.Time `toml:"granted"`
}

// What a path grant allows.
const (
	AccessRead  = "read"
	AccessWrite = "write"
)

// Target is what the grant allows: its host:port or its directory.
func (gr Grant) Target() string { return cmp.Or(gr.Host, gr.Path) }

// Code is what a plugin runs, as a grant records it.
type Code struct {
	Digest string // "sha256:<hex>" of the Wasm
	Signer string // who signed it (source.Signer's String), or ""
}

// ShortDigest is digest cut to "sha256:" and 12 hex digits, for lists.
func ShortDigest(digest string) string {
	if len(digest) > len("sha256:")+12 {
		return digest[:len("sha256:")+12]
	}
	return digest
}

// Allows names what gr allows: "connect" for a host, else its Access
// ("read" or "write").
func (gr Grant) Allows() string {
	if gr.Path != "" {
		return gr.Access
	}
	return "connect"
}

// allows reports whether gr stands for r, for any code.
func (gr Grant) allows(r sandbox.Reach) bool {
	if gr.Plugin != r.Plugin {
		return false
	}
	if r.Path != "" {
		return gr.Path == r.Path && (gr.Access == AccessWrite || !r.Write)
	}
	return gr.Host == r.Target()
}

// allowsCode reports whether gr stands for r made by code.
func (gr Grant) allowsCode(r sandbox.Reach, code Code) bool {
	return gr.Code != "" && gr.Code == code.Digest && gr.allows(r)
}

// grantsFile is the file's shape.
type grantsFile struct {
	Grant []Grant `toml:"grant"`
}

const grantsHeader = `# Written by mcphost when a person answers allow_always to a plugin's request
# for a host outside its allowed_hosts or a directory outside its
# allowed_paths. Each grant stands for the code it was given to (code: the
# sha256 of the Wasm; signer: who signed it); other code under the same
# plugin name is asked again. List with 'mcphost grants list'; remove with
# 'mcphost grants revoke PLUGIN [HOST:PORT|PATH]'. No tool, resource or
# prompt can write it.

`

// Grants is a grants file in memory. It is read by [OpenGrants] and again
// by [Grants.Reload] (every load of a [Loader] with it), and written, whole
// and atomically, by Grant and Revoke. It is safe for concurrent use.
//
// Grants opened with [StoreGrants] live in a shared store instead (the
// key [GrantsKey], in the grants file's format), so that replicas share
// them: every check reads the store (an answer given on one replica
// stands on every other at once), and Grant and Revoke change it with a
// compare-and-swap loop (store.Update), so concurrent answers on several
// replicas are all kept.
type Grants struct {
	file  string
	st    store.Store // nil: the file
	where string      // the store, for messages (password masked)
	mu    sync.Mutex
	list  []Grant
}

// GrantsKey is the store key of the grants of [StoreGrants].
const GrantsKey = "grants"

// StoreGrants returns the grants kept in st under [GrantsKey]; where names
// the store in messages (store.Redact of its URL). It does not read the
// store: the first check does.
func StoreGrants(st store.Store, where string) *Grants {
	return &Grants{st: st, where: where}
}

// OpenGrants reads file; a file that does not exist holds no grants. A
// file that does not parse is an error that names it.
func OpenGrants(file string) (*Grants, error) {
	g := &Grants{file: file}
	return g, g.Reload()
}

// File is where the grants are kept: the grants file's path, or the
// store ("store redis://…").
func (g *Grants) File() string {
	if g.st != nil {
		return "store " + g.where
	}
	return g.file
}

// Shared reports whether the grants live in a store that replicas share.
func (g *Grants) Shared() bool { return g.st != nil }

// Reload reads the file (or the store) again. When it fails, no grant
// stands (a person's earlier answers are asked again) until it reads.
func (g *Grants) Reload() error {
	return g.ReloadContext(context.Background())
}

// ReloadContext is Reload bounded by ctx (which only a store needs).
func (g *Grants) ReloadContext(ctx context.Context) error {
	list, err := g.read(ctx)
	g.mu.Lock()
	g.list = list
	g.mu.Unlock()
	return err
}

// read returns the grants as they are kept now.
func (g *Grants) read(ctx context.Context) ([]Grant, error) {
	if g.st == nil {
		return readGrants(g.file)
	}
	b, err := g.st.Get(ctx, GrantsKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grants: store %s: %w", g.where, err)
	}
	return decodeGrants(b, "store "+g.where)
}

// current returns the grants to check against: the store's as they are
// now (a store read failing is logged by the caller and stands for no
// grant), or the file's as last read.
func (g *Grants) current(ctx context.Context) ([]Grant, error) {
	if g.st != nil {
		list, err := g.read(ctx)
		if err != nil {
			return nil, err
		}
		g.mu.Lock()
		g.list = list
		g.mu.Unlock()
		return list, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.list, nil
}

// readGrants reads the grants file with the one reader of operator
// files: beneath its directory, at most opfile.MaxGrants bytes.
func readGrants(file string) ([]Grant, error) {
	if err := config.SingleLink(file); err != nil {
		return nil, fmt.Errorf("grants: %w", err) // not one grant of it stands
	}
	b, _, err := opfile.Read(file, opfile.MaxGrants)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	return decodeGrants(b, file)
}

// decodeGrants parses and checks the grants file format; file names where
// b came from.
func decodeGrants(b []byte, file string) ([]Grant, error) {
	var f grantsFile
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		return nil, fmt.Errorf("grants: %s: %w", file, err)
	}
	for i, gr := range f.Grant {
		switch {
		case gr.Plugin == "" || (gr.Host == "") == (gr.Path == ""):
			return nil, fmt.Errorf("grants: %s: grant %d: want a plugin and either a host or a path", file, i+1)
		case gr.Path != "" && gr.Access != AccessRead && gr.Access != AccessWrite:
			return nil, fmt.Errorf("grants: %s: grant %d: access %q: want %q or %q", file, i+1, gr.Access, AccessRead, AccessWrite)
		case gr.Code != "" && !validDigest(gr.Code):
			return nil, fmt.Errorf("grants: %s: grant %d: code %q: want \"sha256:\" and 64 hex digits", file, i+1, gr.Code)
		}
	}
	return f.Grant, nil
}

// validDigest reports whether d is "sha256:" and 64 lower-case hex digits.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil && strings.ToLower(hexPart) == hexPart
}

// List returns the grants, by plugin and target.
func (g *Grants) List() []Grant {
	g.mu.Lock()
	out := slices.Clone(g.list)
	g.mu.Unlock()
	sortGrants(out)
	return out
}

// Has reports whether a grant stands for r made by code.
func (g *Grants) Has(r sandbox.Reach, code Code) bool {
	ok, _ := g.HasContext(context.Background(), r, code)
	return ok
}

// HasContext is Has, reading a store through (bounded by ctx): when the
// store cannot be read, no grant stands and the error says why.
func (g *Grants) HasContext(ctx context.Context, r sandbox.Reach, code Code) (bool, error) {
	list, err := g.current(ctx)
	return slices.ContainsFunc(list, func(gr Grant) bool { return gr.allowsCode(r, code) }), err
}

// Other returns a grant that would stand for r were it given to other
// code (or written before grants named code), and whether there is one:
// the reason a person is asked again. It looks at the grants as last read.
func (g *Grants) Other(r sandbox.Reach, code Code) (Grant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gr := range g.list {
		if gr.allows(r) && gr.Code != code.Digest {
			return gr, true
		}
	}
	return Grant{}, false
}

// Grant records that r, made by code, is allowed from now on. It replaces
// the plugin's grants for the same target given to other code, and a
// path's read grant when it grants write. It reads the file first
// (another process, such as `mcphost grants revoke`, may have changed
// it), so it never writes over what it could not read.
//
// In a store, the change is a compare-and-swap retried until it lands
// (ctx bounds it), so an answer given at the same time on another replica
// is kept too.
func (g *Grants) Grant(ctx context.Context, r sandbox.Reach, code Code, now time.Time) error {
	return g.change(ctx, func(list []Grant) ([]Grant, bool) {
		if slices.ContainsFunc(list, func(gr Grant) bool { return gr.allowsCode(r, code) }) {
			return list, false
		}
		gr := Grant{Plugin: r.Plugin, Code: code.Digest, Signer: code.Signer, Host: r.Target(), Granted: now.UTC().Truncate(time.Second)}
		if r.Path != "" {
			gr.Host, gr.Path, gr.Access = "", r.Path, AccessRead
			if r.Write {
				gr.Access = AccessWrite
			}
		}
		list = slices.DeleteFunc(slices.Clone(list), func(o Grant) bool { return o.Plugin == r.Plugin && o.Target() == gr.Target() })
		return append(list, gr), true
	})
}

// Revoke removes plugin's grant for target (host:port or directory), or
// all of plugin's grants when target is "", and returns what it removed.
func (g *Grants) Revoke(ctx context.Context, plugin, target string) ([]Grant, error) {
	var gone []Grant
	err := g.change(ctx, func(list []Grant) ([]Grant, bool) {
		var kept []Grant
		gone = nil
		for _, gr := range list {
			if gr.Plugin == plugin && (target == "" || gr.Target() == target) {
				gone = append(gone, gr)
			} else {
				kept = append(kept, gr)
			}
		}
		return kept, len(gone) > 0
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}

// change applies fn to the grants as kept now and keeps its result when
// fn reports a change: the file is read first (another process, such as
// `mcphost grants revoke`, may have changed it) and rewritten whole; the
// store is changed by compare-and-swap. What could not be read is never
// written over.
func (g *Grants) change(ctx context.Context, fn func([]Grant) ([]Grant, bool)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st == nil {
		list, err := readGrants(g.file)
		if err != nil {
			return err
		}
		next, changed := fn(list)
		if changed {
			if err := writeGrants(g.file, next); err != nil {
				return err
			}
		}
		g.list = next
		return nil
	}
	var list []Grant
	var bad error // the store holds what does not parse
	_, err := store.Update(ctx, g.st, GrantsKey, 0, func(old []byte) ([]byte, error) {
		cur, err := decodeGrants(old, "store "+g.where)
		if err != nil {
			bad = err
			return nil, err
		}
		next, changed := fn(cur)
		list = next
		if !changed {
			return old, nil
		}
		return encodeGrants(next)
	})
	switch {
	case bad != nil:
		return bad
	case err != nil:
		return fmt.Errorf("grants: store %s: %w", g.where, err)
	}
	g.list = list
	return nil
}

func sortGrants(list []Grant) {
	slices.SortFunc(list, func(a, b Grant) int {
		if a.Plugin != b.Plugin {
			return cmp.Compare(a.Plugin, b.Plugin)
		}
		return cmp.Compare(a.Target(), b.Target())
	})
}

// writeGrants replaces file with list: written to a temporary file in the
// same directory, synced and renamed over it, so a reader sees the old
// file or the new one, never half of one.
func writeGrants(file string, list []Grant) error {
	b, err := encodeGrants(list)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".plugins.grants-*.toml")
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("grants: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("grants: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	return nil
}

// encodeGrants returns list in the grants file format, sorted.
func encodeGrants(list []Grant) ([]byte, error) {
	list = slices.Clone(list)
	sortGrants(list)
	var buf bytes.Buffer
	buf.WriteString(grantsHeader)
	if len(list) > 0 {
		if err := toml.NewEncoder(&buf).Encode(grantsFile{Grant: list}); err != nil {
			return nil, fmt.Errorf("grants: %w", err)
		}
	}
	return buf.Bytes(), nil
}
