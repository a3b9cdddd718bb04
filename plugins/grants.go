package plugins

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
)

// GrantsFileName is the file, beside plugins.toml, that holds what a
// person allowed for good (an allow_always answer, consent.go).
const GrantsFileName = "plugins.grants.toml"

// GrantsFile returns the grants file of the config file configFile.
func GrantsFile(configFile string) string {
	return filepath.Join(filepath.Dir(configFile), GrantsFileName)
}

// Grant is one standing approval: Plugin may connect to Host.
type Grant struct {
	Plugin string `toml:"plugin"`
	// Host is "host:port" ("[::1]:443" for IPv6), exactly as the person
	// was asked about it.
	Host string `toml:"host"`
	// Granted is when the person answered.
	Granted time.Time `toml:"granted"`
}

// grantsFile is the file's shape.
type grantsFile struct {
	Grant []Grant `toml:"grant"`
}

const grantsHeader = `# Written by mcphost when a person answers allow_always to a plugin's request
# for a host outside its allowed_hosts. List with 'mcphost grants list';
# remove with 'mcphost grants revoke PLUGIN [HOST:PORT]'. No tool, resource
# or prompt can write it.

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
		if gr.Plugin == "" || gr.Host == "" {
			return nil, fmt.Errorf("grants: %s: grant %d: want both plugin and host", file, i+1)
		}
	}
	return f.Grant, nil
}

// List returns the grants, by plugin and host.
func (g *Grants) List() []Grant {
	g.mu.Lock()
	out := slices.Clone(g.list)
	g.mu.Unlock()
	sortGrants(out)
	return out
}

// Has reports whether plugin may connect to target ("host:port").
func (g *Grants) Has(plugin, target string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.ContainsFunc(g.list, func(gr Grant) bool { return gr.Plugin == plugin && gr.Host == target })
}

// Grant records that plugin may connect to target from now on. It reads the
// file first (another process, such as `mcphost grants revoke`, may have
// changed it), so it never writes over what it could not read.
func (g *Grants) Grant(plugin, target string, now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	list, err := readGrants(g.file)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(list, func(gr Grant) bool { return gr.Plugin == plugin && gr.Host == target }) {
		list = append(list, Grant{Plugin: plugin, Host: target, Granted: now.UTC().Truncate(time.Second)})
	}
	if err := writeGrants(g.file, list); err != nil {
		return err
	}
	g.list = list
	return nil
}

// Revoke removes plugin's grant for target, or all of plugin's grants when
// target is "", and returns what it removed.
func (g *Grants) Revoke(plugin, target string) ([]Grant, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	list, err := readGrants(g.file)
	if err != nil {
		return nil, err
	}
	var kept, gone []Grant
	for _, gr := range list {
		if gr.Plugin == plugin && (target == "" || gr.Host == target) {
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
		return cmp.Compare(a.Host, b.Host)
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
