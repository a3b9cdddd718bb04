package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/mcphost/mcphost/sandbox/limits"
)

// Defaults of the [server] table. Those of a plugin's sandbox limits are
// sandbox's own (one source, package sandbox/limits: sandbox.Limits fills
// the same values for a zero field).
const (
	DefaultName            = "mcphost"
	DefaultPageSize        = 100
	DefaultMaxMessageBytes = 4 << 20
	// DefaultStartupWait is long enough for a cold first start of the root
	// plugins.toml (three Go builds, 17-36 s measured) and short enough to
	// answer within the 60 s request timeout of the official TypeScript
	// SDK; see RATIONALE.md.
	DefaultStartupWait = 50 * time.Second
	DefaultTimeout     = limits.DefaultTimeout
	// DefaultLoadTimeout bounds one plugin's whole load (fetch, build,
	// compile, start functions, lists): several cold Go builds on a busy
	// machine, with room to spare, yet a load stuck for good ends.
	DefaultLoadTimeout = 2 * time.Minute
	// DefaultShutdownGrace bounds how long a stopping server waits for the
	// calls in flight: past the default plugin timeout, with room to spare.
	DefaultShutdownGrace = 10 * time.Second
	DefaultMemoryPages   = limits.DefaultMemoryPages // 256 MiB
)

// Defaults of a plugin's kv_max_keys and kv_max_bytes: room for a
// plugin's counters, caches and settings, not for bulk data.
const (
	DefaultKVMaxKeys  = 10000
	DefaultKVMaxBytes = 16 << 20 // 16 MiB
)

// pluginNameRE is what a plugin name may look like. Names become tool
// prefixes ("<name>_"), so they use only characters that are valid in a
// tool name, start with a letter or digit, and stay short enough (32) to
// leave room for the tool's own name within the 64-character limit.
var pluginNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// ValidName reports whether name may name a plugin. ParseConfig checks
// the names in files; specs built in code are checked when they load.
func ValidName(name string) bool { return pluginNameRE.MatchString(name) }

// toolPrefixRE is what tool_prefix may hold ("" disables namespacing),
// compiled when a file first sets one: a program compiled at init stays
// on the heap of every process (pluginNameRE is wanted by every load).
var toolPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{0,32}$`) })

var (
	topKeys    = []string{"server", "plugin"}
	serverKeys = []string{"name", "instructions", "page_size", "max_message_bytes", "startup_wait", "shutdown_grace",
		"cache_ttl", "cache_scope", "request_state_key_env", "task_ttl", "task_max_bytes", "task_after",
		"plugin_dir", "timeout", "cancel_grace", "load_timeout", "memory", "max_instances", "runtime",
		"store", // what replicas share (issue 31)
		"go"}    // Go-source builds
	pluginKeys = []string{"name", "path", "source", "sha256", "timeout", "cancel_grace", "load_timeout", "memory", "max_instances", "runtime", "policy",
		"allowed_hosts", "may_request_hosts", "allow_private_networks", "allowed_paths", "may_request_paths", "env", "config", "include_tools", "exclude_tools", "task_tools", "tool_prefix",
		"cache_ttl", "cache_scope", "ui",
		"kv_max_keys", "kv_max_bytes"} // plugin state (issue 31)
	mountKeys = []string{"host", "guest", "read_only", "allow_root"}

	// Plugin sources beyond files (source_url.go, source_oci.go).
	remoteSourceKeys = []string{"url", "oci", "signature", "signature_url"}
)

func init() {
	serverKeys = append(serverKeys, serverCompatKeys...)
	pluginKeys = append(pluginKeys, pluginCompatKeys...)
}

// DefaultConfig is the configuration used without a file: the [server]
// defaults and no plugins.
func DefaultConfig() *Config {
	return &Config{Server: ServerConfig{
		Name:            DefaultName,
		PageSize:        DefaultPageSize,
		MaxMessageBytes: DefaultMaxMessageBytes,
		StartupWait:     DefaultStartupWait,
		ShutdownGrace:   DefaultShutdownGrace,
		DrainGrace:      DefaultDrainGrace,
		Timeout:         DefaultTimeout,
		MemoryPages:     DefaultMemoryPages,
		MaxInstances:    limits.DefaultInstances(),
	}}
}

// LoadConfig reads and validates file, then adds one plugin for each *.wasm
// file in the server's plugin_dir (named after the file, without ".wasm").
// A plugin_dir that does not exist yet counts as empty.
//
// A file that holds nothing but white space is a [*ConfigError]: that is
// what an editor's truncate-then-write looks like halfway through, and
// taking it for "no plugins" would unload them all. A set of no plugins is
// written as such: a file with only "[server]", or only a comment.
//
// LoadConfig checks what config owns; [Checks.LoadConfig] adds the checks
// of values whose form another package owns.
func LoadConfig(file string) (*Config, error) { return Checks{}.LoadConfig(file) }

// LoadConfig is the package's [LoadConfig] with ck's checks.
func (ck Checks) LoadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ConfigError{File: file, Msg: fmt.Sprintf("the file is empty (%d bytes), as while an editor saves it; "+
			"to serve no plugins, write a file holding only [server] or a comment", len(data))}
	}
	cfg, err := ck.ParseConfig(file, data)
	if err != nil {
		return nil, err
	}
	if err := cfg.addDropIns(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ParseConfig parses and validates a plugins.toml. Relative paths are
// resolved against file's directory (the working directory when file is
// ""). It reports every problem it finds, each as a [*ConfigError], joined
// with errors.Join. Unknown keys are errors. Spec fields a plugin leaves
// unset stay zero; [ServerConfig] holds the defaults they fall back to.
//
// allowed_paths entries are either strings "host[:guest][:ro|:rw]" or
// tables {host = "…", guest = "…", read_only = true}. The host path may be
// relative to the config file; the guest path, when given, must be
// absolute, and defaults to the (absolute) host path. Use the table form
// for paths that contain ':'. may_request_paths entries have the same form.
//
// ParseConfig checks what config owns; [Checks.ParseConfig] adds the
// checks of values whose form another package owns.
func ParseConfig(file string, data []byte) (*Config, error) { return Checks{}.ParseConfig(file, data) }

// ParseConfig is the package's [ParseConfig] with ck's checks.
func (ck Checks) ParseConfig(file string, data []byte) (*Config, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &ConfigError{File: file, Line: parseErrorLine(data, pe.Position), Msg: pe.Message}
		}
		return nil, &ConfigError{File: file, Msg: err.Error()}
	}
	dir, err := configDir(file)
	if err != nil {
		return nil, &ConfigError{File: file, Msg: err.Error()}
	}
	p := &configParser{file: file, dir: dir, loc: newLocator(string(data)), ck: ck}
	cfg := DefaultConfig()
	cfg.File = file

	top := section{p: p}
	top.unknown(doc, topKeys)
	if v, ok := doc["server"]; ok {
		if m, ok := v.(map[string]any); ok {
			p.server(section{p: p, table: "server"}, m, &cfg.Server)
		} else {
			top.errf("server", "want a table, got %s", tomlType(v))
		}
	}
	if v, ok := doc["auth"]; ok {
		if m, ok := v.(map[string]any); ok {
			cfg.Auth = p.auth(section{p: p, table: "auth"}, m)
		} else {
			top.errf("auth", "want a table, got %s", tomlType(v))
		}
	}
	if v, ok := doc["plugin"]; ok {
		var tables []map[string]any
		switch v := v.(type) {
		case []map[string]any:
			tables = v
		case []any:
			for _, e := range v {
				m, ok := e.(map[string]any)
				if !ok {
					top.errf("plugin", "want an array of tables ([[plugin]]), got an array holding a %s", tomlType(e))
					tables = nil
					break
				}
				tables = append(tables, m)
			}
		default:
			top.errf("plugin", "want an array of tables ([[plugin]]), got %s", tomlType(v))
		}
		seen := map[string]int{} // name → line of its first table
		for i, m := range tables {
			s := section{p: p, table: "plugin", index: i + 1}
			spec := p.plugin(s, m)
			if spec.Name != "" {
				if line, dup := seen[spec.Name]; dup {
					s.name = spec.Name
					s.errf("name", "duplicate plugin name (first defined at line %d)", line)
				} else {
					seen[spec.Name] = spec.Line
				}
			}
			cfg.Plugins = append(cfg.Plugins, spec)
		}
	}
	p.guardMounts(cfg)
	cfg.Server.hidden = cfg.Hidden()
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *ConfigError) int { return cmp.Compare(a.Line, b.Line) })
		errs := make([]error, len(p.errs))
		for i, e := range p.errs {
			errs[i] = e
		}
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

func configDir(file string) (string, error) {
	if file == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	return filepath.Dir(abs), nil
}

// addDropIns appends a plugin for every *.wasm file in PluginDir, in name
// order, with the server defaults and nothing else (no hosts, no paths, no
// environment, no config). A plugin is named after its file, sanitised
// (see dropInName); hidden files (".x.wasm", often an editor's or a
// copier's temporary file) are skipped.
func (c *Config) addDropIns() error {
	dir := c.Server.PluginDir
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &ConfigError{File: c.File, Table: "server", Key: "plugin_dir", Msg: err.Error()}
	}
	taken := map[string]bool{}
	for _, s := range c.Plugins {
		taken[s.Name] = true
	}
	var errs []error
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".wasm")
		if !ok || e.IsDir() || strings.HasPrefix(base, ".") {
			continue
		}
		file := filepath.Join(dir, e.Name())
		name := dropInName(base)
		switch {
		case !pluginNameRE.MatchString(name):
			errs = append(errs, &ConfigError{File: file, Msg: fmt.Sprintf("drop-in plugin name %q is invalid: want 1-32 letters, digits, '_' or '-', starting with a letter or digit", base)})
		case taken[name]:
			errs = append(errs, &ConfigError{File: file, Msg: fmt.Sprintf("drop-in plugin name %q is already used (by a [[plugin]] in %s, or another drop-in)", name, c.File)})
		default:
			taken[name] = true
			c.Plugins = append(c.Plugins, Spec{Name: name, Path: file})
		}
	}
	return errors.Join(errs...)
}

// dropInName turns a file name (without ".wasm") into a plugin name:
// characters other than letters, digits, '_' and '-' become '_', leading
// '_' and '-' are dropped and the result is cut to 32 bytes. It may return
// "" (a name of only punctuation), which the caller rejects.
func dropInName(base string) string {
	b := []byte(base)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	name := strings.TrimLeft(string(b), "_-")
	if len(name) > 32 {
		name = name[:32]
	}
	return name
}

// LoadTimeout is how long one load of spec may take: its load_timeout,
// the server's, or DefaultLoadTimeout.
func LoadTimeout(spec *Spec, server *ServerConfig) time.Duration {
	return cmp.Or(spec.LoadTimeout, server.LoadTimeout, DefaultLoadTimeout)
}

// WatchPaths returns what a file watcher should watch for c: the config
// file and the files whose content is part of it (policy and secrets
// files: [Config.DependsOn]), the plugin_dir, every plugin's .wasm file
// and every Go-source plugin's directory (not the packages it imports
// from elsewhere); for a
// plugin with build and watch, its watch globs instead of its .wasm file,
// which its own build writes (a reload then follows the save, not the
// build's output). Sorted, without duplicates; paths that do not exist yet
// are included.
func (c *Config) WatchPaths() []string {
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p)
		}
	}
	add(c.File)
	out = append(out, c.DependsOn()...)
	add(c.Server.PluginDir)
	for _, s := range c.Plugins {
		if len(s.Watch) > 0 {
			out = append(out, s.Watch...)
		} else {
			add(s.Path)
		}
		add(s.Source)
		if s.UI != nil {
			for _, pg := range s.UI.Pages {
				add(pg.File)
			}
		}
		out = append(out, skillWatchPaths(&s)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// parseErrorLine is the line of a TOML syntax error. The decoder counts a
// line as begun once its lexer has read the newline before it, so an error
// found at the end of a line ("[server" with no "]") would be reported on
// the next; the error's byte offset is counted instead.
func parseErrorLine(data []byte, pos toml.Position) int {
	if pos.Start < 0 || pos.Start > len(data) {
		return pos.Line
	}
	return 1 + bytes.Count(data[:pos.Start], []byte("\n"))
}
