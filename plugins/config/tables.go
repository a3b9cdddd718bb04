package config

import (
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/sandbox/limits"
)

func (p *configParser) server(s section, m map[string]any, sc *ServerConfig) {
	s.unknown(m, serverKeys)
	if v, ok := s.str(m, "name"); ok {
		if strings.TrimSpace(v) == "" {
			s.errf("name", "must not be empty")
		} else {
			sc.Name = v
		}
	}
	if v, ok := s.str(m, "instructions"); ok {
		sc.Instructions = v
	}
	if v, ok := s.integer(m, "page_size", 1, maxPageSize); ok {
		sc.PageSize = int(v)
	}
	if v, ok := s.bytes(m, "max_message_bytes"); ok {
		if v < 1 || v > maxMessage {
			s.errf("max_message_bytes", "%d bytes is out of range [1, 1GiB]", v)
		} else {
			sc.MaxMessageBytes = v
		}
	}
	if v, ok := s.duration(m, "startup_wait", 0, time.Hour); ok {
		sc.StartupWait = v
	}
	if v, ok := s.duration(m, "shutdown_grace", time.Millisecond, time.Hour); ok {
		sc.ShutdownGrace = v
	}
	if v, ok := s.duration(m, "cache_ttl", 0, maxCacheTTL); ok {
		sc.CacheTTL = v
	}
	if v, ok := s.duration(m, "task_ttl", time.Second, 7*24*time.Hour); ok {
		sc.TaskTTL = v
	}
	if v, ok := s.bytes(m, "task_max_bytes"); ok {
		if v < 1<<10 || v > 1<<40 {
			s.errf("task_max_bytes", "%d bytes is out of range [1KiB, 1TiB]", v)
		} else {
			sc.TaskMaxBytes = v
		}
	}
	if v, ok := s.duration(m, "task_after", time.Millisecond, time.Hour); ok {
		sc.TaskAfter = v
	}
	if v, ok := s.cacheScope(m); ok {
		sc.CacheScope = v
	}
	if v, ok := s.str(m, "request_state_key_env"); ok {
		if v == "" {
			s.errf("request_state_key_env", "must not be empty (leave it out instead)")
		} else {
			sc.RequestStateKeyEnv = v
		}
	}
	if v, ok := s.str(m, "store"); ok {
		if !strings.HasPrefix(v, "redis://") && !strings.HasPrefix(v, "rediss://") {
			s.errf("store", "want a redis:// or rediss:// URL (leave it out for the in-process store)")
		} else if err := check(p.ck.Store, v); err != nil {
			s.errf("store", "%v", err)
		} else {
			sc.Store = v
		}
	}
	if v, ok := s.str(m, "plugin_dir"); ok {
		if v == "" {
			s.errf("plugin_dir", "must not be empty (leave it out instead)")
		} else {
			sc.PluginDir = p.abs(v)
		}
	}
	if v, ok := s.duration(m, "timeout", time.Millisecond, time.Hour); ok {
		sc.Timeout = v
	}
	if v, ok := s.duration(m, "cancel_grace", time.Millisecond, time.Hour); ok {
		sc.CancelGrace = v
	}
	if v, ok := s.duration(m, "load_timeout", time.Millisecond, maxLoadTimeout); ok {
		sc.LoadTimeout = v
	}
	if v, ok := s.pages(m, "memory"); ok {
		sc.MemoryPages = v
	}
	if v, ok := s.integer(m, "max_instances", 1, maxInstances); ok {
		sc.MaxInstances = int(v)
	}
	if v, ok := s.str(m, "runtime"); ok {
		checkRuntime(s, v)
	}
	p.serverCompat(s, m, sc)   // configcompat.go
	p.serverReadOnly(s, m, sc) // readonly.go
	p.serverHTTP(s, m, sc)     // confighttp.go
	p.serverBuild(s, m, sc)
}

// serverBuild reads the [server] keys of Go-source builds.
func (p *configParser) serverBuild(s section, m map[string]any, sc *ServerConfig) {
	if v, ok := s.str(m, "go"); ok {
		if v == "" {
			s.errf("go", "must not be empty (leave it out to search PATH and the usual places)")
		} else {
			sc.Go = p.abs(v)
		}
	}
}

func (p *configParser) abs(v string) string {
	if filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return filepath.Join(p.dir, v)
}

// maxCacheTTL bounds cache_ttl: a year is longer than any result should
// stay fresh, and keeps ttlMs far from overflowing a client's integers.
const maxCacheTTL = 365 * 24 * time.Hour

// maxLoadTimeout is the longest load_timeout: a day is no bound at all
// for a load, yet catches a unit typo (load_timeout = "600h").
const maxLoadTimeout = 24 * time.Hour

// cacheScope reads cache_scope, in [server] or a [[plugin]] table.
func (s section) cacheScope(m map[string]any) (string, bool) {
	v, ok := s.str(m, "cache_scope")
	if ok && v != "public" && v != "private" {
		s.errf("cache_scope", "%q: want \"public\" or \"private\"", v)
		return "", false
	}
	return v, ok
}

func (p *configParser) plugin(s section, m map[string]any) Spec {
	spec := Spec{Line: s.line("")}
	if v, ok := s.str(m, "name"); ok {
		if pluginNameRE.MatchString(v) {
			spec.Name = v
			s.name = v
		} else {
			s.errf("name", "invalid plugin name %q: want 1-32 letters, digits, '_' or '-', starting with a letter or digit", v)
		}
	} else if _, present := m["name"]; !present {
		s.errf("name", "missing required key")
	}
	s.unknown(m, slices.Concat(pluginKeys, remoteSourceKeys, buildKeys))
	remote := p.remoteSource(s, m, &spec)
	spec.Signature = p.signature(s, m, remote) // signature.go
	if v, ok := s.duration(m, "cache_ttl", 0, maxCacheTTL); ok {
		spec.CacheTTL = &v
	}
	if v, ok := s.cacheScope(m); ok {
		spec.CacheScope = v
	}

	pathV, hasPath := s.str(m, "path")
	srcV, hasSrc := s.str(m, "source")
	_, pathPresent := m["path"]
	_, srcPresent := m["source"]
	switch {
	case pathPresent && srcPresent:
		s.errf("source", "set either path or source, not both")
	case remote != "" && (pathPresent || srcPresent):
		s.errf(remote, "set only one of path, source, url and oci")
	case !pathPresent && !srcPresent && remote == "":
		s.errf("", "missing path or source (one is required)")
	case hasPath && pathV == "":
		s.errf("path", "must not be empty")
	case hasSrc && srcV == "":
		s.errf("source", "must not be empty")
	case hasPath:
		spec.Path = p.abs(pathV)
	case hasSrc:
		spec.Source = p.abs(srcV)
	}
	if v, ok := s.str(m, "sha256"); ok {
		switch b, err := hex.DecodeString(v); {
		case srcPresent:
			s.errf("sha256", "sha256 pins a path; it cannot be used with source")
		case err != nil || len(b) != 32:
			s.errf("sha256", "want 64 hexadecimal digits, got %q", v)
		default:
			spec.SHA256 = strings.ToLower(v)
		}
	}
	if v, ok := s.duration(m, "timeout", time.Millisecond, time.Hour); ok {
		spec.Timeout = v
	}
	if v, ok := s.duration(m, "cancel_grace", time.Millisecond, time.Hour); ok {
		spec.CancelGrace = v
	}
	if v, ok := s.duration(m, "load_timeout", time.Millisecond, maxLoadTimeout); ok {
		spec.LoadTimeout = v
	}
	if v, ok := s.pages(m, "memory"); ok {
		spec.MemoryPages = v
	}
	if v, ok := s.integer(m, "max_instances", 1, maxInstances); ok {
		spec.MaxInstances = int(v)
	}
	if v, ok := s.integer(m, "kv_max_keys", 1, math.MaxInt32); ok {
		spec.KVMaxKeys = v
	}
	if v, ok := s.bytes(m, "kv_max_bytes"); ok {
		if v < 1 || v > 1<<30 {
			s.errf("kv_max_bytes", "%d bytes is out of range [1, 1GiB]", v)
		} else {
			spec.KVMaxBytes = v
		}
	}
	if v, ok := s.str(m, "runtime"); ok {
		checkRuntime(s, v)
	}
	for _, key := range []string{"allowed_hosts", "may_request_hosts"} {
		hosts, ok := s.strings(m, key)
		if !ok {
			continue
		}
		var rules []string
		for i, h := range hosts {
			if err := limits.CheckAllowedHost(h); err != nil {
				s.errf(key, "element %d %q: %v", i, h, err)
				continue
			}
			rules = append(rules, h)
		}
		if key == "allowed_hosts" {
			spec.AllowedHosts = rules
		} else {
			spec.MayRequestHosts = rules
		}
	}
	if v, ok := s.boolean(m, "allow_private_networks"); ok {
		spec.AllowPrivateNetworks = v
	}
	spec.AllowedPaths = p.mounts(s, m, "allowed_paths")
	spec.MayRequestPaths = p.mounts(s, m, "may_request_paths")
	if env, ok := s.stringMap(m, "env"); ok {
		for k := range env {
			if badEnvName(k) {
				s.errf("env."+k, "invalid environment variable name %q", k)
			}
		}
		spec.Env = env
	}
	if c, ok := s.stringMap(m, "config"); ok {
		spec.Config = c
	}
	for _, key := range []string{"include_tools", "exclude_tools", "task_tools"} {
		pats, ok := s.strings(m, key)
		if !ok {
			continue
		}
		for i, pat := range pats {
			if _, err := path.Match(pat, ""); err != nil {
				s.errf(key, "element %d: bad glob pattern %q", i, pat)
			}
		}
		switch key {
		case "include_tools":
			spec.IncludeTools = pats
		case "exclude_tools":
			spec.ExcludeTools = pats
		default:
			spec.TaskTools = pats
		}
	}
	if v, ok := s.str(m, "tool_prefix"); ok {
		if toolPrefixRE().MatchString(v) {
			spec.ToolPrefix = &v
		} else {
			s.errf("tool_prefix", "invalid prefix %q: want at most 32 letters, digits, '_' or '-'", v)
		}
	}
	p.pluginCompat(s, m, &spec)   // configcompat.go
	p.pluginBuild(s, m, &spec)    // build.go
	p.pluginReadOnly(s, m, &spec) // readonly.go
	p.pluginSkills(s, m, &spec)   // skills.go
	spec.UI = p.ui(s, m, &spec)   // ui.go
	if v, ok := s.str(m, "policy"); ok {
		spec.Policy = p.abs(v)
		p.policy(s, m, &spec, spec.Policy)
	}
	return spec
}

// policy applies a wassette policy file to spec: each of its grants
// fills the TOML key it maps onto, unless the table sets that key itself
// (the TOML wins). Environment grants pass mcphost's own variables of
// those names through, as wassette does.
func (p *configParser) policy(s section, m map[string]any, spec *Spec, file string) {
	pol, err := ReadPolicy(file)
	if err != nil {
		s.errf("policy", "%v", err)
		return
	}
	if _, set := m["allowed_hosts"]; !set {
		spec.AllowedHosts = pol.AllowedHosts
	}
	if _, set := m["allowed_paths"]; !set {
		spec.AllowedPaths = nil
		for _, mt := range pol.AllowedPaths {
			// The checks of every mount, as for allowed_paths.
			if msg := p.mountRules(&mt, false); msg != "" {
				s.errf("policy", "%s: %s in plugins.toml (a policy cannot set allow_root)", mt.From, msg)
				continue
			}
			spec.AllowedPaths = append(spec.AllowedPaths, mt)
		}
	}
	if _, set := m["env"]; !set && len(pol.EnvKeys) > 0 {
		spec.Env = map[string]string{}
		for _, k := range pol.EnvKeys {
			if v, ok := os.LookupEnv(k); ok {
				spec.Env[k] = v
			} else {
				spec.UnsetEnv = append(spec.UnsetEnv, k)
			}
		}
	}
	if _, set := m["memory"]; !set && pol.Memory > 0 {
		pages := bytesToPages(pol.Memory)
		if pages < 1 || pages > maxMemoryPages {
			s.errf("policy", "%s: memory %d bytes is out of range [64KiB, 4GiB]", file, pol.Memory)
			return
		}
		spec.MemoryPages = uint32(pages)
	}
}

// mounts reads the allowed_paths entries of key (allowed_paths or
// may_request_paths, which share their syntax).
func (p *configParser) mounts(s section, m map[string]any, key string) []limits.Mount {
	v, ok := m[key]
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		if tables, ok := v.([]map[string]any); ok {
			for _, t := range tables {
				arr = append(arr, t)
			}
		} else {
			s.errf(key, "want an array, got %s", tomlType(v))
			return nil
		}
	}
	var out []limits.Mount
	for i, e := range arr {
		var mt limits.Mount
		var msg string
		allowRoot := false
		switch e := e.(type) {
		case string:
			mt, msg = parseMount(e)
		case map[string]any:
			mt, allowRoot, msg = mountTable(e)
		default:
			msg = "want a string or a table, got " + tomlType(e)
		}
		if msg == "" {
			msg = p.mountRules(&mt, allowRoot)
		}
		if msg != "" {
			s.errf(key, "element %d: %s", i, msg)
			continue
		}
		out = append(out, mt)
	}
	return out
}

// mountRules is the check every mount passes, whether plugins.toml or a
// policy grants it: it validates mt, makes its host path absolute and
// cleans its guest path, and returns why mt is refused, or "". The
// directory's existence is checked when the plugin loads
// (sandbox.normMounts, whose error names mt.From).
func (p *configParser) mountRules(mt *limits.Mount, allowRoot bool) string {
	if msg := checkMount(mt); msg != "" {
		return msg
	}
	mt.Host = p.abs(mt.Host)
	if isRoot(mt.Host) && !allowRoot {
		return fmt.Sprintf("%q mounts the whole host filesystem; if that is really meant, use the table form with allow_root = true", mt.Host)
	}
	return ""
}

// badEnvName reports whether k cannot name an environment variable.
func badEnvName(k string) bool { return k == "" || strings.ContainsAny(k, "=\x00") }

// parseMount reads "host[:guest][:ro|:rw]".
func parseMount(v string) (limits.Mount, string) {
	parts := strings.Split(v, ":")
	var mt limits.Mount
	if n := len(parts); n > 1 && (parts[n-1] == "ro" || parts[n-1] == "rw") {
		mt.ReadOnly = parts[n-1] == "ro"
		parts = parts[:n-1]
	}
	switch len(parts) {
	case 1:
		mt.Host = parts[0]
	case 2:
		mt.Host, mt.Guest = parts[0], parts[1]
	default:
		return mt, fmt.Sprintf("%q: want \"host[:guest][:ro]\" (use the table form {host = …, guest = …} for paths containing ':')", v)
	}
	return mt, ""
}

// mountTable reads {host, guest, read_only, allow_root}.
func mountTable(t map[string]any) (mt limits.Mount, allowRoot bool, msg string) {
	for k, v := range t {
		switch k {
		case "host", "guest":
			str, ok := v.(string)
			if !ok {
				return mt, false, fmt.Sprintf("%s: want a string, got %s", k, tomlType(v))
			}
			if k == "host" {
				mt.Host = str
			} else {
				mt.Guest = str
			}
		case "read_only", "allow_root":
			b, ok := v.(bool)
			if !ok {
				return mt, false, fmt.Sprintf("%s: want a boolean, got %s", k, tomlType(v))
			}
			if k == "read_only" {
				mt.ReadOnly = b
			} else {
				allowRoot = b
			}
		default:
			if hint := Suggest(k, mountKeys); hint != "" {
				return mt, false, fmt.Sprintf("unknown key %q (did you mean %q?)", k, hint)
			}
			return mt, false, fmt.Sprintf("unknown key %q (want host, guest, read_only, allow_root)", k)
		}
	}
	return mt, allowRoot, ""
}

// checkMount validates mt and cleans its guest path.
func checkMount(mt *limits.Mount) string {
	switch {
	case mt.Host == "":
		return "empty host path"
	case strings.ContainsRune(mt.Host, 0) || strings.ContainsRune(mt.Guest, 0):
		return "path contains a NUL byte"
	case mt.Guest != "" && !strings.HasPrefix(mt.Guest, "/"):
		return fmt.Sprintf("guest path %q must be absolute", mt.Guest)
	}
	if mt.Guest != "" {
		mt.Guest = path.Clean(mt.Guest)
	}
	return ""
}

// isRoot reports whether the cleaned absolute host path is the root of a
// filesystem, itself or through symlinks.
func isRoot(host string) bool {
	if filepath.Dir(host) == host {
		return true
	}
	real, err := filepath.EvalSymlinks(host)
	return err == nil && filepath.Dir(real) == real
}

// checkRuntime reports a runtime key other than "native", the only
// runtime, which it accepts without a word: it states what is true.
func checkRuntime(s section, v string) {
	switch v {
	case limits.RuntimeNative:
	case "extism":
		s.errf("runtime", `runtime "extism" was removed: plugins run on mcphost's native Extism kernel; delete the key`)
	default:
		s.errf("runtime", "%q is not a runtime: plugins run on mcphost's native Extism kernel (%q); delete the key", v, limits.RuntimeNative)
	}
}
