package plugins

import (
	"bytes"
	"cmp"
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
	"github.com/mcphost/mcphost/sandbox"
)

// GrantsFileName is the file, beside plugins.toml, that holds what a
// person allowed for good (an allow_always answer, consent.go). No plugin
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
type Grants struct {
	file string
	mu   sync.Mutex
	list []Grant
}

// OpenGrants reads file; a file that does not exist holds no grants. A
// file that does not parse is an error that names it.
func OpenGrants(file string) (*Grants, error) {
	g := &Grants{file: file}
	return g, g.Reload()
}

// File is the grants file's path.
func (g *Grants) File() string { return g.file }

// Reload reads the file again. When it fails, no grant stands (a person's
// earlier answers are asked again) until it reads.
func (g *Grants) Reload() error {
	list, err := readGrants(g.file)
	g.mu.Lock()
	g.list = list
	g.mu.Unlock()
	return err
}

func readGrants(file string) ([]Grant, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
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
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.ContainsFunc(g.list, func(gr Grant) bool { return gr.allowsCode(r, code) })
}

// Other returns a grant that would stand for r were it given to other
// code (or written before grants named code), and whether there is one:
// the reason a person is asked again.
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
func (g *Grants) Grant(r sandbox.Reach, code Code, now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	list, err := readGrants(g.file)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(list, func(gr Grant) bool { return gr.allowsCode(r, code) }) {
		gr := Grant{Plugin: r.Plugin, Code: code.Digest, Signer: code.Signer, Host: r.Target(), Granted: now.UTC().Truncate(time.Second)}
		if r.Path != "" {
			gr.Host, gr.Path, gr.Access = "", r.Path, AccessRead
			if r.Write {
				gr.Access = AccessWrite
			}
		}
		list = slices.DeleteFunc(list, func(o Grant) bool { return o.Plugin == r.Plugin && o.Target() == gr.Target() })
		list = append(list, gr)
	}
	if err := writeGrants(g.file, list); err != nil {
		return err
	}
	g.list = list
	return nil
}

// Revoke removes plugin's grant for target (host:port or directory), or
// all of plugin's grants when target is "", and returns what it removed.
func (g *Grants) Revoke(plugin, target string) ([]Grant, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	list, err := readGrants(g.file)
	if err != nil {
		return nil, err
	}
	var kept, gone []Grant
	for _, gr := range list {
		if gr.Plugin == plugin && (target == "" || gr.Target() == target) {
			gone = append(gone, gr)
		} else {
			kept = append(kept, gr)
		}
	}
	if len(gone) == 0 {
		g.list = list
		return nil, nil
	}
	if err := writeGrants(g.file, kept); err != nil {
		return nil, err
	}
	g.list = kept
	return gone, nil
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
	list = slices.Clone(list)
	sortGrants(list)
	var buf bytes.Buffer
	buf.WriteString(grantsHeader)
	if len(list) > 0 {
		if err := toml.NewEncoder(&buf).Encode(grantsFile{Grant: list}); err != nil {
			return fmt.Errorf("grants: %w", err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".plugins.grants-*.toml")
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(buf.Bytes()); err != nil {
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
