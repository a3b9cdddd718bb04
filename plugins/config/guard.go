package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/sandbox/limits"
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

// Owned is one host path the operator owns: a path the configuration
// names, or one mcphost reads or writes on the operator's behalf. No
// plugin's mount may reach it (see [Config.Inventory] and guardMounts).
type Owned struct {
	Path string // absolute; for a glob, the directory it matches in
	// What names it in messages, with what a plugin could do with it.
	What string
	// Secret: it decides what plugins may do or holds secrets (the config,
	// grants, policy and secrets files), so no mount may show it, not even
	// read-only: a read-only mount that holds it hides it (sandbox.Limits.Hidden).
	// Other entries are code and what builds it: a mount may read them.
	Secret bool
	// Dir: every file beneath Path counts, so a writable mount beneath it
	// is refused as well as one above it.
	Dir bool
}

// The configuration's types say which of their fields hold paths, so that
// a key cannot name a path without the inventory knowing it (TestInventory
// gives every key a path and fails when one lands in an untagged field):
//
//	owned:"decides" — a file that decides what plugins may do (Owned.Secret)
//	owned:"runs"    — code, or what code is built or trusted from
//	owned:"…,dir"   — a directory (Owned.Dir)
//	owned:"…,glob"  — globs; their directories count, as with dir
//	what:"…"        — how messages name it (after "plugin NAME's" in a
//	                  Spec; %s is the file's base name)
//	reach:"KEY"     — the []limits.Mount a plugin gets from KEY: checked
//	                  against the inventory by guardMounts

// Inventory returns every path the operator owns: each value of a field
// tagged owned in c, the grants file beside the config file, mcphost's
// caches and, when a plugin is built from Go source, the go command's
// caches. Paths are as written (absolute); compare them with symlinks
// resolved (withReal).
func (c *Config) Inventory() []Owned {
	var out []Owned
	walkTagged(reflect.ValueOf(c).Elem(), "", func(f reflect.StructField, v reflect.Value, plugin string) {
		tag, ok := f.Tag.Lookup("owned")
		if !ok {
			return
		}
		kind, opts, _ := strings.Cut(tag, ",")
		what := f.Tag.Get("what")
		if plugin != "" {
			what = fmt.Sprintf("plugin %q's %s", plugin, what)
		}
		if kind == "runs" && !strings.Contains(what, "(") {
			what += " (a plugin could change code that runs)"
		}
		var vals []string
		switch v.Kind() {
		case reflect.String:
			vals = []string{v.String()}
		case reflect.Slice:
			vals = v.Interface().([]string)
		}
		for _, p := range vals {
			if p == "" {
				continue
			}
			what := what
			if strings.Contains(what, "%s") {
				what = fmt.Sprintf(what, filepath.Base(p))
			}
			o := Owned{Path: p, What: what, Secret: kind == "decides", Dir: opts == "dir"}
			if opts == "glob" {
				o.Path, o.Dir = globDir(p), true
			}
			out = append(out, o)
		}
	})
	if c.File != "" {
		if abs, err := filepath.Abs(c.File); err == nil {
			out = append(out, Owned{Path: filepath.Join(filepath.Dir(abs), GrantsFileName),
				What: "the grants file " + GrantsFileName + " (a plugin could grant itself)", Secret: true})
		}
	}
	out = append(out, Owned{Path: CacheRoot(), What: "mcphost's caches (compiled code, builds, downloads: a plugin could change code that runs)", Dir: true})
	if slices.ContainsFunc(c.Plugins, func(s Spec) bool { return s.Source != "" }) {
		for _, d := range goCaches() {
			out = append(out, Owned{Path: d, What: "the go command's caches (a plugin could change what Go-source plugins are built from)", Dir: true})
		}
	}
	return out
}

// Hidden returns the files of c's inventory that no mount may show
// (Owned.Secret), for sandbox.Limits.Hidden: a read-only mount may hold
// them, and the plugin then cannot open, stat or link them.
func (c *Config) Hidden() []string {
	var out []string
	for _, o := range c.Inventory() {
		if o.Secret {
			out = append(out, o.Path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DependsOn returns the files whose content is part of c besides the
// config file itself (policy and secrets files): a watcher watches them as
// it does plugins.toml, so that an operator's edit applies.
func (c *Config) DependsOn() []string {
	var out []string
	for _, o := range c.Inventory() {
		if o.Secret && o.Path != c.File && filepath.Base(o.Path) != GrantsFileName {
			out = append(out, o.Path)
		}
	}
	return out
}

// walkTagged calls fn for every exported struct field beneath v that
// carries an owned or reach tag (and does not look inside it), with the
// name of the [[plugin]] it belongs to ("" outside one). Interfaces (a
// Native module) are not walked: they are code, not configuration.
func walkTagged(v reflect.Value, plugin string, fn func(f reflect.StructField, v reflect.Value, plugin string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkTagged(v.Elem(), plugin, fn)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkTagged(v.Index(i), plugin, fn)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			walkTagged(it.Value(), plugin, fn)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[Spec]() {
			plugin = v.FieldByName("Name").String()
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			_, owned := f.Tag.Lookup("owned")
			_, reach := f.Tag.Lookup("reach")
			if owned || reach {
				fn(f, v.Field(i), plugin)
				continue
			}
			walkTagged(v.Field(i), plugin, fn)
		}
	}
}

// globDir is the directory a glob matches in: its longest leading part
// without pattern characters.
func globDir(pat string) string {
	dir := pat
	for strings.ContainsAny(dir, `*?[\`) {
		dir = filepath.Dir(dir)
	}
	return dir
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

// guardMounts checks every mount a plugin gets (each field tagged reach:
// allowed_paths and may_request_paths, whatever they came from: a string,
// a table or a policy file's storage grants; what a person may allow at
// call time is one of these mounts, behind its gate) against the
// inventory, comparing paths as written and with symlinks resolved:
//
//   - a writable mount that holds an owned path, or lies beneath an owned
//     directory, is refused;
//   - a read-only mount may hold owned paths: code may be read, and the
//     secret ones (Owned.Secret) are hidden from it by the sandbox
//     (sandbox.Limits.Hidden, from [Config.Hidden]).
//
// It also refuses a secret file (Owned.Secret) with more than one hard
// link: another name for it could sit inside a mount, where no path
// comparison sees it. Code files are left to the rule above and to sha256
// pins: build tools hard-link their artefacts (cargo does).
func (p *configParser) guardMounts(cfg *Config) {
	owned := cfg.Inventory()
	for i := range cfg.Plugins {
		spec := &cfg.Plugins[i]
		s := section{p: p, table: "plugin", index: i + 1, name: spec.Name}
		walkTagged(reflect.ValueOf(spec).Elem(), spec.Name, func(f reflect.StructField, v reflect.Value, _ string) {
			key, ok := f.Tag.Lookup("reach")
			if !ok {
				return
			}
			for j, mt := range v.Interface().([]limits.Mount) {
				msg := checkGuarded(mt, owned)
				switch {
				case msg == "":
				case mt.From != "":
					s.errf("policy", "%s: %s", mt.From, msg)
				default:
					s.errf(key, "element %d: %s", j, msg)
				}
			}
		})
	}
	top := section{p: p}
	for _, o := range owned {
		if !o.Secret {
			continue
		}
		if err := SingleLink(o.Path); err != nil {
			top.errf("", "%s: %v", o.What, err)
		}
	}
}

// SingleLink refuses a file with more than one hard link, naming it: an
// operator's file with another name may have that name inside a mount,
// where a plugin could read or change it and no path comparison sees it.
// A file that does not exist, or is not a regular file, passes.
func SingleLink(file string) error {
	if n := links(file); n > 1 {
		return fmt.Errorf("%s has %d hard links: another name for it may sit inside a mount, where a plugin could read or change it; "+
			"remove the other links (find / -samefile %s) or copy the file", file, n, file)
	}
	return nil
}

// checkGuarded says why the mount mt may not be given, or "".
func checkGuarded(mt limits.Mount, owned []Owned) string {
	if mt.ReadOnly {
		return ""
	}
	hosts := withReal(mt.Host)
	for _, g := range owned {
		for _, gp := range withReal(g.Path) {
			for _, h := range hosts {
				if within(gp, h) {
					return fmt.Sprintf("%q is writable and holds %s; mount it read-only (\"%s:ro\", or read_only = true) or a directory that does not hold %s",
						mt.Host, g.What, mt.Host, gp)
				}
				if g.Dir && within(h, gp) {
					return fmt.Sprintf("%q is writable and lies inside %s; mount it read-only (\"%s:ro\", or read_only = true) or a directory outside %s",
						mt.Host, g.What, mt.Host, gp)
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
