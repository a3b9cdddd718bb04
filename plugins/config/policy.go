package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/mcphost/mcphost/plugins/internal/opfile"
	"github.com/mcphost/mcphost/sandbox/limits"
)

// Policy is what a wassette policy.yaml grants, mapped onto the keys of a
// [[plugin]] table.
type Policy struct {
	AllowedHosts []string
	// AllowedPaths are the storage grants, each with From set to the
	// policy's file and line; they still pass the checks of every mount
	// (configParser.mountRules) when a [[plugin]] table applies them.
	AllowedPaths []limits.Mount
	EnvKeys      []string // environment variables passed through from mcphost's own
	Memory       int64    // bytes; 0 when not set
}

// PolicyError is a policy line mcphost cannot read or map.
type PolicyError struct {
	File string
	Line int // 0 when the problem has no line (an empty document)
	Msg  string
}

func (e *PolicyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// policyMaps lists what mcphost maps, for the message of a key it cannot.
const policyMaps = "mcphost maps network.allow[].host, storage.allow[].uri and access, environment.allow[].key and resources.limits.memory"

// ReadPolicy reads a wassette policy file. Any YAML goes (block or flow,
// quoted or plain, anchors); every key must be one mcphost maps, and
// anything else (a CIDR or deny list, a CPU limit, a typo) is an error
// naming the file and line.
//
// It is read with the one reader of operator files (package opfile):
// beneath its directory, at most [opfile.MaxPolicy] bytes.
func ReadPolicy(file string) (*Policy, error) {
	b, _, err := opfile.Read(file, opfile.MaxPolicy)
	if err != nil {
		return nil, err
	}
	return parsePolicy(file, b)
}

// parsePolicy reads policy text: yaml.v3 parses it into nodes, which keep
// their lines, and a walk over the nodes maps each key it knows.
func parsePolicy(file string, b []byte) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return &Policy{}, nil // an empty file grants nothing
	case err != nil:
		return nil, yamlError(file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(file, err)
		}
		return nil, &PolicyError{file, more.Line, "a second YAML document: a policy is one document"}
	}
	r := &policyReader{file: file, p: &Policy{}}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	err := r.mapping(root, "", map[string]func(*yaml.Node, string) error{
		"version":     r.ignore,
		"description": r.ignore,
		"permissions": func(n *yaml.Node, path string) error {
			return r.mapping(n, path, map[string]func(*yaml.Node, string) error{
				"network":     func(n *yaml.Node, path string) error { return r.allow(n, path, "host", r.host) },
				"storage":     func(n *yaml.Node, path string) error { return r.allow(n, path, "uri", r.storage) },
				"environment": func(n *yaml.Node, path string) error { return r.allow(n, path, "key", r.env) },
				"resources": func(n *yaml.Node, path string) error {
					return r.mapping(n, path, map[string]func(*yaml.Node, string) error{
						"limits": func(n *yaml.Node, path string) error {
							return r.mapping(n, path, map[string]func(*yaml.Node, string) error{"memory": r.memory})
						},
					})
				},
			})
		},
	})
	if err != nil {
		return nil, err
	}
	return r.p, nil
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// yamlError turns a yaml.v3 syntax error into a PolicyError with its line.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &PolicyError{file, line, msg[len(m[0]):]}
	}
	return &PolicyError{file, 0, strings.TrimPrefix(msg, "yaml: ")}
}

// policyReader walks a policy's nodes into p; each method reports the
// first problem as a *PolicyError.
type policyReader struct {
	file string
	p    *Policy
}

func (r *policyReader) fail(n *yaml.Node, format string, args ...any) error {
	return &PolicyError{r.file, n.Line, fmt.Sprintf(format, args...)}
}

// deref follows an alias to its anchor.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func kindOf(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping calls each[key] for every key of n, a mapping; null is a
// mapping without keys. A key each does not know is an error.
func (r *policyReader) mapping(n *yaml.Node, path string, each map[string]func(*yaml.Node, string) error) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return r.fail(n, "%s: want a mapping, got %s", orTop(path), kindOf(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return r.fail(k, "%s: want a key, got %s", orTop(path), kindOf(k))
		}
		full := join(path, k.Value)
		if seen[k.Value] {
			return r.fail(k, "%s is set twice", full)
		}
		seen[k.Value] = true
		f, ok := each[k.Value]
		if !ok {
			known := make([]string, 0, len(each))
			for key := range each {
				known = append(known, key)
			}
			if hint := Suggest(k.Value, known); hint != "" {
				return r.fail(k, "%s: unknown key (did you mean %q?)", full, hint)
			}
			return r.fail(k, "%s cannot be mapped onto plugins.toml (%s)", full, policyMaps)
		}
		if err := f(v, full); err != nil {
			return err
		}
	}
	return nil
}

func orTop(path string) string {
	if path == "" {
		return "the policy"
	}
	return path
}

func (r *policyReader) ignore(n *yaml.Node, path string) error {
	_, err := r.scalar(n, path, true)
	return err
}

// scalar returns n's text; null is an error unless nullOK.
func (r *policyReader) scalar(n *yaml.Node, path string, nullOK bool) (string, error) {
	n = deref(n)
	switch {
	case isNull(n) && nullOK:
		return "", nil
	case n.Kind != yaml.ScalarNode || isNull(n):
		return "", r.fail(n, "%s: want a string, got %s", path, kindOf(n))
	}
	return n.Value, nil
}

// allow reads {allow: [item, …]}: each item a mapping with the required
// key need, handed to each. An empty or null list grants nothing.
func (r *policyReader) allow(n *yaml.Node, path, need string, each func(item *yaml.Node, path string, fields map[string]*yaml.Node) error) error {
	return r.mapping(n, path, map[string]func(*yaml.Node, string) error{
		"allow": func(n *yaml.Node, path string) error {
			n = deref(n)
			if isNull(n) {
				return nil
			}
			if n.Kind != yaml.SequenceNode {
				return r.fail(n, "%s: want a list, got %s", path, kindOf(n))
			}
			for i, item := range n.Content {
				ip := fmt.Sprintf("%s[%d]", path, i)
				fields := map[string]*yaml.Node{}
				keys := map[string]func(*yaml.Node, string) error{need: nil}
				if need == "uri" {
					keys["access"] = nil
				}
				for k := range keys {
					keys[k] = func(v *yaml.Node, _ string) error { fields[k] = v; return nil }
				}
				if err := r.mapping(item, ip, keys); err != nil {
					return err
				}
				if deref(item).Kind != yaml.MappingNode || fields[need] == nil {
					return r.fail(item, "%s: missing %s", ip, need)
				}
				if err := each(item, ip, fields); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

func (r *policyReader) host(_ *yaml.Node, path string, f map[string]*yaml.Node) error {
	n := f["host"]
	s, err := r.scalar(n, path+".host", false)
	if err != nil {
		return err
	}
	h, err := policyHost(s)
	if err != nil {
		return r.fail(n, "host %q: %v", s, err)
	}
	r.p.AllowedHosts = append(r.p.AllowedHosts, h)
	return nil
}

// policyHost maps a policy's host onto an allowed_hosts rule. wassette
// takes a host or a URL, and of a URL matches the host and the scheme,
// whatever the port; mcphost's rules match the host and a port, so a URL
// keeps its host, and its port when it names one.
func policyHost(s string) (string, error) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		switch {
		case err != nil:
			return "", err
		case u.Scheme != "http" && u.Scheme != "https":
			return "", fmt.Errorf("scheme %q: want an http or https URL, or a host name", u.Scheme)
		case u.User != nil:
			return "", errors.New("want a URL without credentials")
		case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
			return "", errors.New("a URL's path cannot be enforced (rules match hosts and ports); write the host")
		case u.Host == "":
			return "", errors.New("URL without a host")
		}
		s = u.Host
	}
	return s, limits.CheckAllowedHost(s)
}

func (r *policyReader) storage(_ *yaml.Node, path string, f map[string]*yaml.Node) error {
	un := f["uri"]
	uri, err := r.scalar(un, path+".uri", false)
	if err != nil {
		return err
	}
	dir, found := strings.CutPrefix(uri, "fs://")
	switch {
	case !found || !strings.HasPrefix(dir, "/"):
		return r.fail(un, "uri %q: want fs:///absolute/path (wassette resolves a relative one in its own component directory; mcphost has none)", uri)
	case strings.ContainsAny(dir, "*?["):
		return r.fail(un, "uri %q: glob patterns cannot be mounted; name the directory", uri)
	}
	ro := true
	if an := f["access"]; an != nil {
		an = deref(an)
		if an.Kind != yaml.SequenceNode {
			return r.fail(an, "%s.access: want a list such as [read] or [read, write], got %s", path, kindOf(an))
		}
		if len(an.Content) == 0 {
			return r.fail(an, "%s.access: an empty list grants nothing; want [read] or [read, write], or drop the entry", path)
		}
		for _, a := range an.Content {
			v, err := r.scalar(a, path+".access", false)
			if err != nil {
				return err
			}
			switch v {
			case "read":
			case "write":
				ro = false
			default:
				return r.fail(a, "access %q: want read or write", v)
			}
		}
	}
	r.p.AllowedPaths = append(r.p.AllowedPaths, limits.Mount{Host: dir, Guest: dir, ReadOnly: ro,
		From: fmt.Sprintf("%s:%d", r.file, un.Line)})
	return nil
}

func (r *policyReader) env(_ *yaml.Node, path string, f map[string]*yaml.Node) error {
	n := f["key"]
	k, err := r.scalar(n, path+".key", false)
	if err != nil {
		return err
	}
	if badEnvName(k) {
		return r.fail(n, "key %q: invalid environment variable name", k)
	}
	if !slices.Contains(r.p.EnvKeys, k) {
		r.p.EnvKeys = append(r.p.EnvKeys, k)
	}
	return nil
}

func (r *policyReader) memory(n *yaml.Node, path string) error {
	v, err := r.scalar(n, path, false)
	if err != nil {
		return err
	}
	b, err := k8sBytes(v)
	if err != nil {
		return r.fail(n, "memory: %v", err)
	}
	r.p.Memory = b
	return nil
}

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
