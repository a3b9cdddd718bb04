package config

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/sandbox"
)

// Policy is what a wassette policy.yaml grants, mapped onto the keys of a
// [[plugin]] table.
type Policy struct {
	AllowedHosts []string
	AllowedPaths []sandbox.Mount
	EnvKeys      []string // environment variables passed through from mcphost's own
	Memory       int64    // bytes; 0 when not set
}

// PolicyError is a policy line mcphost cannot read or map.
type PolicyError struct {
	File string
	Line int
	Msg  string
}

func (e *PolicyError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// policyLeaf is one scalar of the policy: its path (list items numbered,
// "permissions.storage.allow[0].uri"), value and line.
type policyLeaf struct {
	path string
	vals []string // a flow list's items, or the one scalar
	line int
}

// ReadPolicy reads a wassette policy file. It understands the YAML that
// policies are written in (block mappings and lists, flow lists, quoted
// and plain scalars, comments); anything else, and any key mcphost cannot
// map (CIDR and deny lists, CPU limits), is an error naming its line.
func ReadPolicy(file string) (*Policy, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	leaves, err := parsePolicyYAML(file, string(b))
	if err != nil {
		return nil, err
	}
	p := &Policy{}
	items := map[string]map[string]policyLeaf{} // item path → key → leaf
	var order []string
	fail := func(l policyLeaf, format string, args ...any) error {
		return &PolicyError{File: file, Line: l.line, Msg: fmt.Sprintf(format, args...)}
	}
	for _, l := range leaves {
		generic := listIndex.ReplaceAllString(l.path, "[]")
		switch generic {
		case "version", "description":
			continue
		case "permissions.network.allow[].host", "permissions.storage.allow[].uri", "permissions.storage.allow[].access",
			"permissions.environment.allow[].key":
			ip := l.path[:strings.LastIndexByte(l.path, ']')+1]
			key := strings.TrimPrefix(l.path[len(ip):], ".")
			if items[ip] == nil {
				items[ip] = map[string]policyLeaf{}
				order = append(order, ip)
			}
			items[ip][key] = l
		case "permissions.resources.limits.memory":
			n, err := k8sBytes(l.vals[0])
			if err != nil {
				return nil, fail(l, "memory: %v", err)
			}
			p.Memory = n
		default:
			return nil, fail(l, "%s cannot be mapped onto plugins.toml (mcphost maps network.allow[].host, storage.allow[].uri and access, environment.allow[].key and resources.limits.memory)", l.path)
		}
	}
	for _, ip := range order {
		it := items[ip]
		switch {
		case strings.HasPrefix(ip, "permissions.network."):
			h := it["host"]
			if err := sandbox.CheckAllowedHost(h.vals[0]); err != nil {
				return nil, fail(h, "host %q: %v", h.vals[0], err)
			}
			p.AllowedHosts = append(p.AllowedHosts, h.vals[0])
		case strings.HasPrefix(ip, "permissions.environment."):
			p.EnvKeys = append(p.EnvKeys, it["key"].vals[0])
		default:
			u, ok := it["uri"]
			if !ok {
				return nil, fail(it["access"], "storage permission without a uri")
			}
			dir, found := strings.CutPrefix(u.vals[0], "fs://")
			if !found || !strings.HasPrefix(dir, "/") {
				return nil, fail(u, "uri %q: want fs:///absolute/path", u.vals[0])
			}
			if strings.ContainsAny(dir, "*?[") {
				return nil, fail(u, "uri %q: glob patterns cannot be mounted; name the directory", u.vals[0])
			}
			ro := true
			if a, ok := it["access"]; ok {
				for _, v := range a.vals {
					switch v {
					case "read":
					case "write":
						ro = false
					default:
						return nil, fail(a, "access %q: want read or write", v)
					}
				}
			}
			p.AllowedPaths = append(p.AllowedPaths, sandbox.Mount{Host: dir, Guest: dir, ReadOnly: ro})
		}
	}
	return p, nil
}

var listIndex = regexp.MustCompile(`\[\d+\]`)

// k8sBytes reads a memory quantity as wassette writes it ("512Mi",
// "1Gi", "1048576").
func k8sBytes(s string) (int64, error) {
	for _, suf := range []string{"Ki", "Mi", "Gi"} {
		if strings.HasSuffix(s, suf) {
			s += "B"
		}
	}
	return ParseBytes(s)
}

// parsePolicyYAML reads the YAML subset policies use into leaves.
func parsePolicyYAML(file, text string) ([]policyLeaf, error) {
	type frame struct {
		min   int    // lines of this mapping are indented at least this much
		path  string // of the mapping (or list) they belong to
		items int    // list items seen, when the frame's value is a list
	}
	stack := []*frame{{min: 0}}
	var leaves []policyLeaf
	for i, raw := range strings.Split(text, "\n") {
		line := i + 1
		s := stripComment(strings.TrimRight(raw, " \t\r"))
		if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "---" {
			continue
		}
		if strings.Contains(s, "\t") {
			return nil, &PolicyError{file, line, "tabs are not allowed in YAML indentation"}
		}
		indent := len(s) - len(strings.TrimLeft(s, " "))
		s = s[indent:]
		for len(stack) > 1 && stack[len(stack)-1].min > indent {
			stack = stack[:len(stack)-1]
		}
		top := stack[len(stack)-1]
		path := top.path
		if rest, ok := strings.CutPrefix(s, "- "); ok || s == "-" {
			path = fmt.Sprintf("%s[%d]", top.path, top.items)
			top.items++
			item := &frame{min: indent + 1, path: path}
			stack = append(stack, item)
			s = strings.TrimSpace(rest)
			if s == "" {
				continue
			}
			indent += 2
		}
		key, val, ok := strings.Cut(s, ":")
		if !ok || (val != "" && val[0] != ' ') {
			return nil, &PolicyError{file, line, fmt.Sprintf("cannot read %q: want key: value", s)}
		}
		key = unquote(strings.TrimSpace(key))
		full := key
		if path != "" {
			full = path + "." + key
		}
		val = strings.TrimSpace(val)
		if val == "" {
			stack = append(stack, &frame{min: indent + 1, path: full})
			continue
		}
		vals, err := policyValue(val)
		if err != nil {
			return nil, &PolicyError{file, line, err.Error()}
		}
		leaves = append(leaves, policyLeaf{path: full, vals: vals, line: line})
	}
	return leaves, nil
}

// policyValue reads a scalar or a flow list of scalars.
func policyValue(v string) ([]string, error) {
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return nil, fmt.Errorf("unterminated list %s", v)
		}
		var out []string
		for _, p := range strings.Split(v[1:len(v)-1], ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, unquote(p))
			}
		}
		return out, nil
	}
	if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "&") || strings.HasPrefix(v, "*") || strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") {
		return nil, fmt.Errorf("%s: flow mappings, anchors and block scalars are not supported; write one key per line", v)
	}
	return []string{unquote(v)}, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// stripComment drops a # comment that is not inside quotes.
func stripComment(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			return s[:i]
		}
	}
	return s
}
