package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/sandbox/limits"
)

func TestParseConfigFull(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.toml")
	src := `
[server]
name = "demo"
instructions = "use the tools"
page_size = 50
max_message_bytes = "1MiB"
startup_wait = "3s"
plugin_dir = "plugins.d"
timeout = "7s"
cancel_grace = "3s"
load_timeout = "90s"
memory = "128MiB"
max_instances = 3
runtime = "native"
task_ttl = "10m"
task_max_bytes = "1MiB"
task_after = "250ms"

[[plugin]]
name = "hash"
path = "x/hash.wasm"
sha256 = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
timeout = "2s"
cancel_grace = "500ms"
load_timeout = "30s"
memory = "100000"            # rounds up to 2 pages
max_instances = 4
allowed_hosts = ["api.example.com", "*.example.org"]
may_request_hosts = ["*.github.com", "127.0.0.1:8080"]
allowed_paths = ["./data:/data//:ro", "/tmp/x/", { host = "rel", guest = "/r", read_only = true }, { host = "/", guest = "/host/../root", read_only = true, allow_root = true }]
may_request_paths = ["./docs:/docs:ro", "/srv/out"]
env = { KEY = "value", N = 3 }
config = { root = "/data" }
include_tools = ["sha*"]
exclude_tools = ["debug_*"]
task_tools = ["sha512*"]
tool_prefix = ""
runtime = "native"
allow_private_networks = true

[[plugin]]
name = "src"
source = "/abs/src"
`
	cfg, err := ParseConfig(file, []byte(src))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	wantServer := ServerConfig{Name: "demo", Instructions: "use the tools", PageSize: 50, MaxMessageBytes: 1 << 20,
		StartupWait: 3 * time.Second, ShutdownGrace: DefaultShutdownGrace, DrainGrace: DefaultDrainGrace, PluginDir: filepath.Join(dir, "plugins.d"), Timeout: 7 * time.Second, CancelGrace: 3 * time.Second,
		LoadTimeout: 90 * time.Second, MemoryPages: 2048, MaxInstances: 3, TaskTTL: 10 * time.Minute, TaskMaxBytes: 1 << 20, TaskAfter: 250 * time.Millisecond,
		hidden: []string{filepath.Join(dir, GrantsFileName), file}}
	if !reflect.DeepEqual(cfg.Server, wantServer) {
		t.Errorf("server: got %+v; want %+v", cfg.Server, wantServer)
	}
	if len(cfg.Plugins) != 2 {
		t.Fatalf("got %d plugins; want 2", len(cfg.Plugins))
	}
	empty := ""
	want := Spec{
		Name: "hash", Path: filepath.Join(dir, "x/hash.wasm"),
		SHA256:      "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
		Timeout:     2 * time.Second,
		CancelGrace: 500 * time.Millisecond,
		LoadTimeout: 30 * time.Second,
		MemoryPages: 2, MaxInstances: 4,
		AllowedHosts:    []string{"api.example.com", "*.example.org"},
		MayRequestHosts: []string{"*.github.com", "127.0.0.1:8080"},
		AllowedPaths: []limits.Mount{
			{Host: filepath.Join(dir, "data"), Guest: "/data", ReadOnly: true},
			{Host: "/tmp/x"},
			{Host: filepath.Join(dir, "rel"), Guest: "/r", ReadOnly: true},
			{Host: "/", Guest: "/root", ReadOnly: true},
		},
		MayRequestPaths: []limits.Mount{
			{Host: filepath.Join(dir, "docs"), Guest: "/docs", ReadOnly: true},
			{Host: "/srv/out"},
		},
		Env:          map[string]string{"KEY": "value", "N": "3"},
		Config:       map[string]string{"root": "/data"},
		IncludeTools: []string{"sha*"}, ExcludeTools: []string{"debug_*"}, TaskTools: []string{"sha512*"},
		ToolPrefix: &empty,
		Line:       19,

		AllowPrivateNetworks: true,
	}
	if got := cfg.Plugins[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("plugin 0:\n got %+v\nwant %+v", got, want)
	}
	if got := cfg.Plugins[1]; got.Source != "/abs/src" || got.Path != "" || got.Line != 41 || got.ToolPrefix != nil {
		t.Errorf("plugin 1: got %+v; want source /abs/src at line 41 with no prefix", got)
	}
	if cfg.File != file {
		t.Errorf("File: got %q; want %q", cfg.File, file)
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg, err := ParseConfig("", nil)
	if err != nil {
		t.Fatalf("ParseConfig(empty): %v", err)
	}
	if got, want := cfg.Server, DefaultConfig().Server; !reflect.DeepEqual(got, want) {
		t.Errorf("empty file: got %+v; want defaults %+v", got, want)
	}
	d := DefaultConfig().Server
	if d.Name != "mcphost" || d.PageSize != 100 || d.MaxMessageBytes != 4<<20 || d.StartupWait != 50*time.Second ||
		d.Timeout != 5*time.Second || d.MemoryPages != 4096 || d.MaxInstances < 1 {
		t.Errorf("DefaultConfig: got %+v", d)
	}
}

// TestParseConfigErrors checks each problem is found, with the right line,
// plugin and key.
func TestParseConfigGo(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ src, want string }{
		{"", ""},
		{"[server]\ngo = \"/opt/go/bin/go\"\n", "/opt/go/bin/go"},
		{"[server]\ngo = \"tools/go/bin/go\"\n", filepath.Join(dir, "tools/go/bin/go")},
	} {
		cfg, err := ParseConfig(filepath.Join(dir, "plugins.toml"), []byte(tc.src))
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", tc.src, err)
		}
		if cfg.Server.Go != tc.want {
			t.Errorf("ParseConfig(%q): Go = %q; want %q", tc.src, cfg.Server.Go, tc.want)
		}
	}
}

// TestParseConfigShutdownGrace: [server] shutdown_grace, and its default.
func TestParseConfigShutdownGrace(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want time.Duration
	}{
		{"[server]\n", 10 * time.Second},
		{"[server]\nshutdown_grace = \"2500ms\"\n", 2500 * time.Millisecond},
	} {
		cfg, err := ParseConfig("plugins.toml", []byte(tt.src))
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", tt.src, err)
		}
		if got := cfg.Server.ShutdownGrace; got != tt.want {
			t.Errorf("ParseConfig(%q): ShutdownGrace = %v; want %v", tt.src, got, tt.want)
		}
	}
}

// TestParseConfigStateless: the [server] keys of the 2026-07-28 era.
func TestParseConfigStateless(t *testing.T) {
	cfg, err := ParseConfig("plugins.toml", []byte("[server]\ncache_ttl = \"1m\"\ncache_scope = \"public\"\nrequest_state_key_env = \"STATE_KEY\"\n"))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if s := cfg.Server; s.CacheTTL != time.Minute || s.CacheScope != "public" || s.RequestStateKeyEnv != "STATE_KEY" {
		t.Errorf("got %+v; want cache_ttl 1m, cache_scope public, request_state_key_env STATE_KEY", s)
	}
}

// TestParseConfigPluginCache: a plugin's own cache_ttl and cache_scope,
// and what it leaves to [server].
func TestParseConfigPluginCache(t *testing.T) {
	ttl := func(d time.Duration) *time.Duration { return &d }
	tests := []struct {
		name, keys string
		wantTTL    *time.Duration
		wantScope  string
	}{
		{"neither", "", nil, ""},
		{"both", "cache_ttl = \"10m\"\ncache_scope = \"public\"", ttl(10 * time.Minute), "public"},
		{"zero ttl is set, not unset", "cache_ttl = \"0s\"", ttl(0), ""},
		{"scope only", "cache_scope = \"private\"", nil, "private"},
		{"a year", "cache_ttl = \"8760h\"", ttl(365 * 24 * time.Hour), ""},
	}
	for _, tt := range tests {
		src := "[server]\ncache_ttl = \"1m\"\ncache_scope = \"public\"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n" + tt.keys + "\n"
		cfg, err := ParseConfig("plugins.toml", []byte(src))
		if err != nil {
			t.Errorf("%s: ParseConfig: %v", tt.name, err)
			continue
		}
		spec := cfg.Plugins[0]
		if (spec.CacheTTL == nil) != (tt.wantTTL == nil) || spec.CacheTTL != nil && *spec.CacheTTL != *tt.wantTTL || spec.CacheScope != tt.wantScope {
			t.Errorf("%s: got cache_ttl %v, cache_scope %q; want %v, %q", tt.name, spec.CacheTTL, spec.CacheScope, tt.wantTTL, tt.wantScope)
		}
		if cfg.Server.CacheTTL != time.Minute || cfg.Server.CacheScope != "public" {
			t.Errorf("%s: server got %v, %q; want 1m, public", tt.name, cfg.Server.CacheTTL, cfg.Server.CacheScope)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // each error's text, after the file name
	}{
		{"unknown plugin key", `
[[plugin]]
name = "hash"
path = "a.wasm"
memroy = "1MiB"
`, []string{`5: plugin "hash": key "memroy": unknown key (did you mean "memory"?)`}},
		{"unknown server key and top-level key", `
verbose = true
[server]
pagesize = 3
`, []string{`2: key "verbose": unknown key`, `4: server: key "pagesize": unknown key (did you mean "page_size"?)`}},
		{"shutdown_grace out of range", `
[server]
shutdown_grace = "0s"
`, []string{`3: server: key "shutdown_grace": 0s is out of range [1ms, 1h0m0s]`}},
		{"shutdown_grace not a duration", `
[server]
shutdown_grace = "10"
`, []string{`3: server: key "shutdown_grace": invalid duration "10" (want a number and a unit, like "5s" or "1m30s")`}},
		{"empty go", `
[server]
go = ""
`, []string{`3: server: key "go": must not be empty (leave it out to search PATH and the usual places)`}},
		{"bad cache_scope", `
[server]
cache_scope = "shared"
`, []string{`3: server: key "cache_scope": "shared": want "public" or "private"`}},
		{"bad plugin cache_scope", `
[[plugin]]
name = "a"
path = "a.wasm"
cache_scope = "Public"
`, []string{`5: plugin "a": key "cache_scope": "Public": want "public" or "private"`}},
		{"plugin cache_ttl out of range", `
[[plugin]]
name = "a"
path = "a.wasm"
cache_ttl = "9000h"
`, []string{`5: plugin "a": key "cache_ttl": 9000h0m0s is out of range [0s, 8760h0m0s]`}},
		{"plugin cache_ttl negative", `
[[plugin]]
name = "a"
path = "a.wasm"
cache_ttl = "-1s"
`, []string{`5: plugin "a": key "cache_ttl": -1s is out of range [0s, 8760h0m0s]`}},
		{"plugin cache_ttl not a string", `
[[plugin]]
name = "a"
path = "a.wasm"
cache_ttl = 60
`, []string{`5: plugin "a": key "cache_ttl": want a string, got integer`}},
		{"missing name", `
[[plugin]]
path = "a.wasm"
`, []string{`2: plugin #1: key "name": missing required key`}},
		{"bad name", `
[[plugin]]
name = "has space"
path = "a.wasm"
`, []string{`3: plugin #1: key "name": invalid plugin name "has space": want 1-32 letters, digits, '_' or '-', starting with a letter or digit`}},
		{"both path and source", `
[[plugin]]
name = "a"
path = "a.wasm"
source = "src"
`, []string{`5: plugin "a": key "source": set either path or source, not both`}},
		{"neither path nor source", `
[[plugin]]
name = "a"
`, []string{`2: plugin "a": missing path or source (one is required)`}},
		{"duplicate names", `
[[plugin]]
name = "a"
path = "a.wasm"

[[plugin]]
name = "a"
path = "b.wasm"
`, []string{`7: plugin "a": key "name": duplicate plugin name (first defined at line 2)`}},
		{"bad duration", `
[[plugin]]
name = "a"
path = "a.wasm"
timeout = "5 seconds"
`, []string{`5: plugin "a": key "timeout": invalid duration "5 seconds" (want a number and a unit, like "5s" or "1m30s")`}},
		{"duration wrong type", `
[server]
timeout = 5
`, []string{`3: server: key "timeout": want a string, got integer`}},
		{"memory too large", `
[[plugin]]
name = "a"
path = "a.wasm"
memory = "5GiB"
`, []string{`5: plugin "a": key "memory": 5368709120 bytes is out of range [64KiB, 4GiB]`}},
		{"memory zero", `
[server]
memory = 0
`, []string{`3: server: key "memory": 0 bytes is out of range [64KiB, 4GiB]`}},
		{"memory bad unit", `
[server]
memory = "12 parsecs"
`, []string{`3: server: key "memory": invalid size "12 parsecs": unknown unit "parsecs" (want B, KB, KiB, MB, MiB, GB or GiB)`}},
		{"negative memory", `
[server]
memory = -1
`, []string{`3: server: key "memory": size -1 is negative`}},
		{"bad sha256", `
[[plugin]]
name = "a"
path = "a.wasm"
sha256 = "xyz"
`, []string{`5: plugin "a": key "sha256": want 64 hexadecimal digits, got "xyz"`}},
		{"sha256 with source", `
[[plugin]]
name = "a"
source = "src"
sha256 = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
`, []string{`5: plugin "a": key "sha256": sha256 pins a path; it cannot be used with source`}},
		{"bad glob", `
[[plugin]]
name = "a"
path = "a.wasm"
include_tools = ["ok*", "[bad"]
`, []string{`5: plugin "a": key "include_tools": element 1: bad glob pattern "[bad"`}},
		{"page size", `
[server]
page_size = 0
`, []string{`3: server: key "page_size": 0 is out of range [1, 100000]`}},
		{"negative instances", `
[[plugin]]
name = "a"
path = "a.wasm"
max_instances = -2
`, []string{`5: plugin "a": key "max_instances": -2 is out of range [1, 1024]`}},
		{"bad runtime", `
[[plugin]]
name = "a"
path = "a.wasm"
runtime = "wasmtime"
`, []string{`5: plugin "a": key "runtime": "wasmtime" is not a runtime: plugins run on mcphost's native Extism kernel ("native"); delete the key`}},
		{"removed runtime", `
[server]
runtime = "extism"

[[plugin]]
name = "a"
path = "a.wasm"
runtime = "extism"
`, []string{
			`3: server: key "runtime": runtime "extism" was removed: plugins run on mcphost's native Extism kernel; delete the key`,
			`8: plugin "a": key "runtime": runtime "extism" was removed: plugins run on mcphost's native Extism kernel; delete the key`,
		}},
		{"private networks not a boolean", `
[[plugin]]
name = "a"
path = "a.wasm"
allow_private_networks = "yes"
`, []string{`5: plugin "a": key "allow_private_networks": want a boolean, got string`}},
		{"private networks misspelt", `
[[plugin]]
name = "a"
path = "a.wasm"
allow_private_network = true
`, []string{`5: plugin "a": key "allow_private_network": unknown key (did you mean "allow_private_networks"?)`}},
		{"bad prefix", `
[[plugin]]
name = "a"
path = "a.wasm"
tool_prefix = "a::"
`, []string{`5: plugin "a": key "tool_prefix": invalid prefix "a::": want at most 32 letters, digits, '_' or '-'`}},
		{"bad mount", `
[[plugin]]
name = "a"
path = "a.wasm"
allowed_paths = ["a:b:c:d", "x:rel", { host = "h", gest = "/g" }]
`, []string{
			`5: plugin "a": key "allowed_paths": element 0: "a:b:c:d": want "host[:guest][:ro]" (use the table form {host = …, guest = …} for paths containing ':')`,
			`5: plugin "a": key "allowed_paths": element 1: guest path "rel" must be absolute`,
			`5: plugin "a": key "allowed_paths": element 2: unknown key "gest" (did you mean "guest"?)`,
		}},
		{"mount of the host root", `
[[plugin]]
name = "a"
path = "a.wasm"
allowed_paths = ["/", "/:/host:ro", { host = "/tmp/../", guest = "/h" }, { host = "/", allow_root = "yes" }, "x:/a\u0000b"]
`, []string{
			`5: plugin "a": key "allowed_paths": element 0: "/" mounts the whole host filesystem; if that is really meant, use the table form with allow_root = true`,
			`5: plugin "a": key "allowed_paths": element 1: "/" mounts the whole host filesystem; if that is really meant, use the table form with allow_root = true`,
			`5: plugin "a": key "allowed_paths": element 2: "/" mounts the whole host filesystem; if that is really meant, use the table form with allow_root = true`,
			`5: plugin "a": key "allowed_paths": element 3: allow_root: want a boolean, got string`,
			`5: plugin "a": key "allowed_paths": element 4: path contains a NUL byte`,
		}},
		{"bad host", `
[[plugin]]
name = "a"
path = "a.wasm"
allowed_hosts = ["https://x.com", "a.*.com", "api.example.com:8443", "x.com/api", "x.com:99999", "", "[::1]:8080", "x:80:1"]
`, []string{
			`5: plugin "a": key "allowed_hosts": element 0 "https://x.com": want a host name, not a URL (leave out the scheme and path)`,
			`5: plugin "a": key "allowed_hosts": element 1 "a.*.com": '*' may only appear alone or as a leading "*."`,
			`5: plugin "a": key "allowed_hosts": element 3 "x.com/api": want a host name, not a path (rules match hosts and ports only)`,
			`5: plugin "a": key "allowed_hosts": element 4 "x.com:99999": port "99999": want a number from 1 to 65535`,
			`5: plugin "a": key "allowed_hosts": element 5 "": empty host`,
			`5: plugin "a": key "allowed_hosts": element 7 "x:80:1": more than one ':' (write an IPv6 address in brackets: [::1]:8080)`,
		}},
		{"bad may_request_hosts", `
[[plugin]]
name = "a"
path = "a.wasm"
may_request_hosts = ["https://x.com", "ok.example.com"]
`, []string{
			`5: plugin "a": key "may_request_hosts": element 0 "https://x.com": want a host name, not a URL (leave out the scheme and path)`,
		}},
		{"bad may_request_paths", `
[[plugin]]
name = "a"
path = "a.wasm"
may_request_paths = ["ok", "x:rel", "/"]
`, []string{
			`5: plugin "a": key "may_request_paths": element 1: guest path "rel" must be absolute`,
			`5: plugin "a": key "may_request_paths": element 2: "/" mounts the whole host filesystem; if that is really meant, use the table form with allow_root = true`,
		}},
		{"env value table", `
[[plugin]]
name = "a"
path = "a.wasm"

[plugin.env]
OK = "1"
BAD = { x = 1 }
`, []string{`8: plugin "a": key "env.BAD": want a string, got table`}},
		{"several errors in file order", `
[server]
page_size = -1

[[plugin]]
name = "a"
path = "a.wasm"
timeout = "fast"

[[plugin]]
name = "b"
memory = "1 lightyear"
`, []string{
			`3: server: key "page_size": -1 is out of range [1, 100000]`,
			`8: plugin "a": key "timeout": invalid duration "fast" (want a number and a unit, like "5s" or "1m30s")`,
			`10: plugin "b": missing path or source (one is required)`,
			`12: plugin "b": key "memory": invalid size "1 lightyear": unknown unit "lightyear" (want B, KB, KiB, MB, MiB, GB or GiB)`,
		}},
		// A syntax error found at the end of its line is reported on that
		// line, not the next (the decoder's own count has moved on).
		{"syntax error", `
[server
name = "x"
`, []string{`2: expected '.' or ']' to end table name, but got '\n' instead`}},
		{"syntax error on line 1", "[[plugin]\nname = \"x\"\n", []string{`1: expected end of table array name delimiter ']', but got '\n' instead`}},
		{"syntax error inside a line", "[server]\npage_size = 1 2\n", []string{`2: expected a top-level item to end with a newline, comment, or EOF, but got '2' instead`}},
		{"plugin not an array", `
plugin = "x"
`, []string{`2: key "plugin": want an array of tables ([[plugin]]), got string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("p.toml", []byte(tt.src))
			if err == nil {
				t.Fatalf("got config %+v; want errors %q", cfg, tt.want)
			}
			var got []string
			for _, e := range unjoin(err) {
				var ce *ConfigError
				if !errors.As(e, &ce) {
					t.Errorf("error %v is %T; want *ConfigError", e, e)
					continue
				}
				got = append(got, strings.TrimPrefix(ce.Error(), "p.toml:"))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestConfigErrorFields(t *testing.T) {
	_, err := ParseConfig("plugins.toml", []byte("[[plugin]]\nname = \"hash\"\npath = \"a.wasm\"\nmemroy = 1\n"))
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v; want a *ConfigError", err)
	}
	want := ConfigError{File: "plugins.toml", Line: 4, Table: "plugin", Plugin: "hash", Index: 1, Key: "memroy",
		Msg: `unknown key (did you mean "memory"?)`}
	if *ce != want {
		t.Errorf("got %+v; want %+v", *ce, want)
	}
	if got, w := ce.Error(), `plugins.toml:4: plugin "hash": key "memroy": unknown key (did you mean "memory"?)`; got != w {
		t.Errorf("Error(): got %q; want %q", got, w)
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false},
		{"65536", 65536, false},
		{"64KiB", 64 << 10, false},
		{"64 kib", 64 << 10, false},
		{"100 MB", 100e6, false},
		{"4GiB", 4 << 30, false},
		{"1TB", 1e12, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"1.5GiB", 0, true},
		{"-1", 0, true},
		{"99999999999999999999", 0, true},
		{"9999999999999TiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestLoadConfigDropIns(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, "[server]\nplugin_dir = \"d\"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n")
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"zeta.wasm", "beta.wasm", "notes.txt"} {
		write(t, filepath.Join(dir, "d", f), "")
	}
	cfg, err := LoadConfig(file)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	var got []string
	for _, s := range cfg.Plugins {
		got = append(got, s.Name+"="+s.Path)
	}
	want := []string{"a=" + filepath.Join(dir, "a.wasm"), "beta=" + filepath.Join(dir, "d", "beta.wasm"),
		"zeta=" + filepath.Join(dir, "d", "zeta.wasm")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plugins: got %q; want %q", got, want)
	}

	write(t, filepath.Join(dir, "d", "a.wasm"), "")
	if _, err := LoadConfig(file); err == nil || !strings.Contains(err.Error(), `drop-in plugin name "a" is already used`) {
		t.Errorf("drop-in named like a [[plugin]]: got %v; want a name conflict error", err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v; want os.ErrNotExist", err)
	}
}

// TestLoadConfigEmpty: a file holding nothing (an editor's save caught
// halfway) is an error that says how to write no plugins; a file that says
// so, with only [server] or a comment, is a valid set of none.
func TestLoadConfigEmpty(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, src string
		wantErr   bool
	}{
		{"0 bytes", "", true},
		{"white space only", "\n  \t\r\n", true},
		{"only [server]", "[server]\n", false},
		{"only a comment", "# no plugins for now\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".toml")
			write(t, file, tt.src)
			cfg, err := LoadConfig(file)
			if !tt.wantErr {
				if err != nil || len(cfg.Plugins) != 0 {
					t.Fatalf("LoadConfig: got %v, %d plugins; want no error and no plugins", err, len(cfg.Plugins))
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != file {
				t.Fatalf("LoadConfig: got %v; want a *ConfigError naming %s", err, file)
			}
			for _, want := range []string{"empty", "[server]", "comment"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func write(t testing.TB, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLocator(t *testing.T) {
	src := `# comment
title = "x"
[server]
name = "s"
long = """
key = "inside a string"
"""
arr = [
  "x = 1",
]
[[plugin]]
name = "a"
env.HOME = "/h"
[plugin.config]
root = "/r"
[[plugin]]
"quoted key" = 1
'lit' = 2
`
	l := newLocator(src)
	tests := []struct {
		table, key string
		want       int
	}{
		{"", "title", 2},
		{"server", "name", 4},
		{"server", "long", 5},
		{"server", "key", 3}, // inside a string: falls back to the table
		{"server", "arr", 8},
		{"server", "x", 3},
		{"plugin[0]", "name", 12},
		{"plugin[0]", "env.HOME", 13},
		{"plugin[0]", "env", 13},
		{"plugin[0]", "config", 14},
		{"plugin[0]", "config.root", 15},
		{"plugin[0]", "missing", 11},
		{"plugin[1]", "quoted key", 17},
		{"plugin[1]", "lit", 18},
		{"plugin[1]", "", 16},
		{"plugin[7]", "name", 11}, // unknown table: the first "plugin" line
	}
	for _, tt := range tests {
		if got := l.line(tt.table, tt.key); got != tt.want {
			t.Errorf("line(%q, %q) = %d; want %d", tt.table, tt.key, got, tt.want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "[server]\nname = \"x\"\n", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nmemory = \"1MiB\"\n",
		"[[plugin]]\nname=\"a\"\nsource=\"s\"\nallowed_paths=[\"a:b:ro\", {host=\"h\"}]\nenv={A=1}\n",
		"plugin = [{name = \"a\", path = \"x\"}]\n", "[plugin.env]\nA = 1\n", "x = \"\"\"\n[[plugin]]\n\"\"\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := ParseConfig("f.toml", []byte(src))
		if (cfg == nil) == (err == nil) {
			t.Fatalf("got config %v and error %v; want exactly one", cfg, err)
		}
		if err != nil {
			for _, e := range unjoin(err) {
				var ce *ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("error %v is %T; want *ConfigError", e, e)
				}
			}
			return
		}
		for _, s := range cfg.Plugins {
			if !pluginNameRE.MatchString(s.Name) || (s.Path == "") == (s.Source == "") ||
				s.MemoryPages > maxMemoryPages {
				t.Fatalf("invalid spec accepted: %+v", s)
			}
		}
	})
}

func TestWatchPaths(t *testing.T) {
	cfg, err := ParseConfig("/etc/m/plugins.toml", []byte(`
[server]
plugin_dir = "d"
[[plugin]]
name = "a"
path = "x.wasm"
[[plugin]]
name = "b"
source = "/src/b"
[[plugin]]
name = "c"
path = "x.wasm"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/etc/m/d", "/etc/m/plugins.toml", "/etc/m/x.wasm", "/src/b"}
	if got := cfg.WatchPaths(); !reflect.DeepEqual(got, want) {
		t.Errorf("WatchPaths: got %q; want %q", got, want)
	}
}
