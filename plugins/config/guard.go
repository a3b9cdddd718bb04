package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/sandbox"
)

// GrantsFileName is the file, beside plugins.toml, that holds what a
// person allowed for good (package plugins reads and writes it).
const GrantsFileName = "plugins.grants.toml"

// CacheRoot is the directory of every mcphost cache: compiled code, Go
// builds, downloads (url and oci sources) and plugin lists.
func CacheRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "mcphost")
}

// guarded is a host path no plugin may write through a mount: what decides
// what plugins may do (the config file, the grants file) or what code
// they run (a plugin's .wasm, source or build directory, the plugin_dir,
// mcphost's caches).
type guarded struct {
	path string
	what string
	// inside: a mount beneath path is refused too (a cache entry or a
	// drop-in written from inside is as bad as one written from above).
	inside bool
}

// guardedPaths lists what cfg's mounts must not hold writable.
func guardedPaths(cfg *Config) []guarded {
	var out []guarded
	if cfg.File != "" {
		if abs, err := filepath.Abs(cfg.File); err == nil {
			out = append(out,
				guarded{path: abs, what: "the config file " + filepath.Base(abs) + " (a plugin could rewrite its own limits)"},
				guarded{path: filepath.Join(filepath.Dir(abs), GrantsFileName), what: "the grants file " + GrantsFileName + " (a plugin could grant itself)"})
		}
	}
	if d := cfg.Server.PluginDir; d != "" {
		out = append(out, guarded{path: d, what: "the plugin_dir (a plugin could add plugins)", inside: true})
	}
	for _, s := range cfg.Plugins {
		for _, p := range []struct{ path, what string }{
			{s.Path, ".wasm"}, {s.Source, "source directory"}, {s.BuildDir, "build directory"},
		} {
			if p.path != "" {
				out = append(out, guarded{path: p.path, what: fmt.Sprintf("plugin %q's %s (a plugin could change code that runs)", s.Name, p.what)})
			}
		}
	}
	out = append(out, guarded{path: CacheRoot(), what: "mcphost's caches (compiled code, builds, downloads: a plugin could change code that runs)", inside: true})
	if slices.ContainsFunc(cfg.Plugins, func(s Spec) bool { return s.Source != "" }) {
		for _, d := range goCaches() {
			out = append(out, guarded{path: d, what: "the go command's caches (a plugin could change what Go-source plugins are built from)", inside: true})
		}
	}
	return out
}

// goCaches are the go command's build and module caches as the
// environment names them, or their defaults (`go env` would run the go
// command at every load).
func goCaches() []string {
	var out []string
	if d := os.Getenv("GOCACHE"); d != "" && d != "off" {
		out = append(out, d)
	} else if ucd, err := os.UserCacheDir(); err == nil {
		out = append(out, filepath.Join(ucd, "go-build"))
	}
	switch gopath := os.Getenv("GOPATH"); {
	case os.Getenv("GOMODCACHE") != "":
		out = append(out, os.Getenv("GOMODCACHE"))
	case gopath != "":
		out = append(out, filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod"))
	default:
		if home, err := os.UserHomeDir(); err == nil {
			out = append(out, filepath.Join(home, "go", "pkg", "mod"))
		}
	}
	return out
}

// guardMounts refuses every writable mount (allowed_paths and
// may_request_paths that are not read-only, whatever they came from: a
// string, a table or a policy file) that holds, or for caches and the
// plugin_dir lies inside, a guarded path, comparing both as written and
// with symlinks resolved. A read-only mount of them is allowed: it changes
// nothing a plugin may do or run (it may show the config file, so keep
// secrets in secrets_file or the keyring, not in env).
func (p *configParser) guardMounts(cfg *Config) {
	guards := guardedPaths(cfg)
	for i := range cfg.Plugins {
		spec := &cfg.Plugins[i]
		s := section{p: p, table: "plugin", index: i + 1, name: spec.Name}
		for _, key := range []string{"allowed_paths", "may_request_paths"} {
			list := spec.AllowedPaths
			if key == "may_request_paths" {
				list = spec.MayRequestPaths
			}
			for j, mt := range list {
				if msg := checkGuarded(mt, guards); msg != "" {
					s.errf(key, "element %d: %s", j, msg)
				}
			}
		}
	}
}

// checkGuarded says why the mount mt may not be writable, or "".
func checkGuarded(mt sandbox.Mount, guards []guarded) string {
	if mt.ReadOnly {
		return ""
	}
	hosts := withReal(mt.Host)
	for _, g := range guards {
		for _, gp := range withReal(g.path) {
			for _, h := range hosts {
				if within(gp, h) || g.inside && within(h, gp) {
					return fmt.Sprintf("%q is writable and holds %s; mount it read-only (\"%s:ro\", or read_only = true) or a directory that does not hold %s",
						mt.Host, g.what, mt.Host, gp)
				}
			}
		}
	}
	return ""
}

// withReal returns p and, when it differs, p with symlinks resolved (of
// its longest existing prefix, for a path not made yet).
func withReal(p string) []string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			real = filepath.Join(real, rest)
			if real != p {
				return []string{p, real}
			}
			return []string{p}
		}
		if filepath.Dir(dir) == dir {
			return []string{p}
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}
