package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sandbox/limits"
)

// TestPolicyFiles reads the policies in testdata/policy, each a shape
// wassette's own policies take: hosts as names and URLs, flow mappings,
// null and empty permissions, anchors, storage with and without access.
func TestPolicyFiles(t *testing.T) {
	from := func(file string, line int) string {
		return filepath.Join("testdata", "policy", file) + ":" + strconv.Itoa(line)
	}
	for _, tt := range []struct {
		file string
		want Policy
	}{
		{"url-host.yaml", Policy{AllowedHosts: []string{"feeds.example.org", "api.example.org:8080", "*.example.net"}}},
		{"env-and-host.yaml", Policy{AllowedHosts: []string{"api.weather.example"}, EnvKeys: []string{"MCPHOST_POLICY_TEST"}}},
		{"empty-permissions.yaml", Policy{}},
		{"null-permissions.yaml", Policy{}},
		{"storage.yaml", Policy{
			AllowedPaths: []limits.Mount{
				{Host: "/srv/data", Guest: "/srv/data", From: from("storage.yaml", 7)},
				{Host: "/srv/docs", Guest: "/srv/docs", ReadOnly: true, From: from("storage.yaml", 10)},
				{Host: "/srv/plain", Guest: "/srv/plain", ReadOnly: true, From: from("storage.yaml", 12)},
			},
			Memory: 512 << 20,
		}},
		{"flow.yaml", Policy{AllowedHosts: []string{"a.example", "b.example"}, EnvKeys: []string{"A_KEY"}}},
		{"anchors.yaml", Policy{
			AllowedHosts: []string{"api.example.com"},
			EnvKeys:      []string{"API_TOKEN"},
			AllowedPaths: []limits.Mount{{Host: "/srv/cache", Guest: "/srv/cache", From: from("anchors.yaml", 12)}},
		}},
		{"root.yaml", Policy{AllowedPaths: []limits.Mount{{Host: "/", Guest: "/", ReadOnly: true, From: from("root.yaml", 6)}}}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ReadPolicy(filepath.Join("testdata", "policy", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ReadPolicy:\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// TestPolicyRefuses: each policy mcphost cannot map, or that is not a
// policy, is an error naming its line; odd values are errors, not panics.
func TestPolicyRefuses(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"permissions:\n  network:\n    allow:\n      - cidr: 10.0.0.0/8\n", ":4: permissions.network.allow[0].cidr cannot be mapped"},
		{"permissions:\n  network:\n    deny:\n      - host: x\n", ":3: permissions.network.deny cannot be mapped"},
		{"permissions:\n  resources:\n    limits:\n      cpu: 500m\n", ":4: permissions.resources.limits.cpu cannot be mapped"},
		{"permissions:\n  resources:\n    memory: 1024\n", ":3: permissions.resources.memory cannot be mapped"},
		{"permissions:\n  runtime:\n    docker: {}\n", ":2: permissions.runtime cannot be mapped"},
		{"permissions:\n  netwrok: {}\n", `:2: permissions.netwrok: unknown key (did you mean "network"?)`},
		{"permisions: {}\n", `:1: permisions: unknown key (did you mean "permissions"?)`},
		{"permissions:\n  storage:\n    allow:\n      - uri: fs://relative\n", `:4: uri "fs://relative": want fs:///absolute/path`},
		{"permissions:\n  storage:\n    allow:\n      - uri: \"fs:///work/**\"\n", `:4: uri "fs:///work/**": glob patterns`},
		{"permissions:\n  storage:\n    allow:\n      - uri: http://not-fs\n", `:4: uri "http://not-fs": want fs:///absolute/path`},
		{"permissions:\n  storage:\n    allow:\n      - uri: fs:///x\n        access: [exec]\n", `:5: access "exec"`},
		{"permissions:\n  storage:\n    allow:\n      - uri: fs:///x\n        access: []\n", ":5: permissions.storage.allow[0].access: an empty list grants nothing"},
		{"permissions:\n  storage:\n    allow:\n      - uri: fs:///x\n        access: read\n", `:5: permissions.storage.allow[0].access: want a list such as [read]`},
		{"permissions:\n  storage:\n    allow:\n      - access: [read]\n", ":4: permissions.storage.allow[0]: missing uri"},
		// Empty and odd values.
		{"permissions:\n  network:\n    allow:\n      - host: []\n", ":4: permissions.network.allow[0].host: want a string, got a list"},
		{"permissions:\n  network:\n    allow:\n      - host:\n", ":4: permissions.network.allow[0].host: want a string, got null"},
		{"permissions:\n  network:\n    allow:\n      - host: {a: b}\n", ":4: permissions.network.allow[0].host: want a string, got a mapping"},
		{"permissions:\n  network:\n    allow:\n      -\n", ":4: permissions.network.allow[0]: missing host"},
		{"permissions:\n  network:\n    allow:\n      - {}\n", ":4: permissions.network.allow[0]: missing host"},
		{"permissions:\n  network:\n    allow:\n      - x.example\n", `:4: permissions.network.allow[0]: want a mapping, got "x.example"`},
		{"permissions:\n  network:\n    allow: x.example\n", `:3: permissions.network.allow: want a list, got "x.example"`},
		{"permissions:\n  network:\n    allow:\n      - host: \"\"\n", `:4: host "": empty host`},
		{"permissions:\n  network:\n    allow:\n      - host: https://x.example/api\n", `:4: host "https://x.example/api": a URL's path cannot be enforced`},
		{"permissions:\n  network:\n    allow:\n      - host: ftp://x.example\n", `:4: host "ftp://x.example": scheme "ftp"`},
		{"permissions:\n  network:\n    allow:\n      - host: https://u:p@x.example\n", `:4: host "https://u:p@x.example": want a URL without credentials`},
		{"permissions:\n  environment:\n    allow:\n      - key: \"A=B\"\n", `:4: key "A=B": invalid environment variable name`},
		{"permissions:\n  resources:\n    limits:\n      memory: lots\n", `:4: memory: invalid size "lots"`},
		{"permissions: [a]\n", `:1: permissions: want a mapping, got a list`},
		{"permissions:\n  network: {}\n  network: {}\n", ":3: permissions.network is set twice"},
		{"version: [1]\n", ":1: version: want a string, got a list"},
		{"just text\n", `:1: the policy: want a mapping, got "just text"`},
		{"a: b\n---\nc: d\n", ":2: a second YAML document"},
		{"permissions:\n\tnetwork: {}\n", ":2: found character that cannot start any token"},
		{"permissions: {network: \n", ":1: did not find expected node content"},
	} {
		f := filepath.Join(t.TempDir(), "policy.yaml")
		if err := os.WriteFile(f, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPolicy(f)
		var pe *PolicyError
		if err == nil || !errors.As(err, &pe) || pe.File != f || !strings.Contains(err.Error(), f+tt.want) {
			t.Errorf("%q: got %v; want a *PolicyError containing %q", tt.yaml, err, "policy.yaml"+tt.want)
		}
	}
}

// TestPolicyEmptyGrants: empty and null lists, an empty file and a
// comment-only one grant nothing, without an error.
func TestPolicyEmptyGrants(t *testing.T) {
	for _, text := range []string{
		"", "# nothing\n", "---\n", "permissions:\n", "permissions: {}\n",
		"permissions:\n  network:\n    allow: []\n  storage:\n    allow:\n  environment: {}\n  resources: {limits: {}}\n",
	} {
		p, err := parsePolicy("policy.yaml", []byte(text))
		if err != nil || !reflect.DeepEqual(*p, Policy{}) {
			t.Errorf("%q: got %+v, %v; want no grants", text, p, err)
		}
	}
}

// TestPolicyInConfig applies a policy to a [[plugin]] table: the TOML's
// own keys win, the rest comes from the policy, and each storage grant
// passes the checks of every mount, its error naming the policy's line.
func TestPolicyInConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		t.Helper()
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	write("c.wasm", "\x00asm")
	pol := write("policy.yaml", `version: "1.0"
permissions:
  storage:
    allow:
      - uri: "fs://`+data+`"
        access: ["read", "write"]
  network:
    allow:
      - host: "https://api.weather.example/"
  environment:
    allow:
      - key: "MCPHOST_POLICY_TEST"
      - key: "MCPHOST_POLICY_UNSET"
  resources:
    limits:
      memory: 512Mi
`)
	t.Setenv("MCPHOST_POLICY_TEST", "from the environment")
	os.Unsetenv("MCPHOST_POLICY_UNSET")

	cfg, err := LoadConfig(write("plugins.toml", "[[plugin]]\nname = \"c\"\npath = \"c.wasm\"\npolicy = \"policy.yaml\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := cfg.Plugins[0]
	wantPaths := []limits.Mount{{Host: data, Guest: data, From: pol + ":5"}}
	if !reflect.DeepEqual(spec.AllowedHosts, []string{"api.weather.example"}) || !reflect.DeepEqual(spec.AllowedPaths, wantPaths) ||
		!reflect.DeepEqual(spec.Env, map[string]string{"MCPHOST_POLICY_TEST": "from the environment"}) || spec.MemoryPages != 8192 {
		t.Errorf("spec with policy: hosts %q, paths %+v, env %v, pages %d", spec.AllowedHosts, spec.AllowedPaths, spec.Env, spec.MemoryPages)
	}
	if !reflect.DeepEqual(spec.UnsetEnv, []string{"MCPHOST_POLICY_UNSET"}) {
		t.Errorf("UnsetEnv: got %q; want the granted key that is not set", spec.UnsetEnv)
	}

	cfg, err = LoadConfig(write("plugins.toml", "[[plugin]]\nname = \"c\"\npath = \"c.wasm\"\npolicy = \"policy.yaml\"\nallowed_hosts = [\"only.example.org\"]\nenv = {A = \"b\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if spec := cfg.Plugins[0]; !reflect.DeepEqual(spec.AllowedHosts, []string{"only.example.org"}) || !reflect.DeepEqual(spec.Env, map[string]string{"A": "b"}) {
		t.Errorf("the TOML's keys: got hosts %q, env %v; want the TOML's", spec.AllowedHosts, spec.Env)
	}

	// fs:/// is the whole filesystem: refused as in allowed_paths, where
	// only allow_root = true admits it.
	write("root.yaml", "permissions:\n  storage:\n    allow:\n      - uri: fs:///\n        access: [read, write]\n")
	_, err = LoadConfig(write("plugins.toml", "[[plugin]]\nname = \"c\"\npath = \"c.wasm\"\npolicy = \"root.yaml\"\n"))
	if want := filepath.Join(dir, "root.yaml") + `:4: "/" mounts the whole host filesystem`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("fs:///: got %v; want an error containing %q", err, want)
	}
	// An error in the policy names the plugins.toml line and the policy's.
	write("bad.yaml", "permissions:\n  network:\n    allow:\n      - host: []\n")
	_, err = LoadConfig(write("plugins.toml", "[[plugin]]\nname = \"c\"\npath = \"c.wasm\"\npolicy = \"bad.yaml\"\n"))
	if want := `plugins.toml:4: plugin "c": key "policy": ` + filepath.Join(dir, "bad.yaml") + ":4: "; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad policy: got %v; want an error containing %q", err, want)
	}
}

// TestWassettePolicies reads wassette's own policies from a checkout
// named by MCPHOST_WASSETTE_DIR (never committed here; fetch
// github.com/microsoft/wassette), copied into a temporary directory:
// every example's policy.yaml must load, and a policy of wassette's that
// mcphost cannot map must fail with a line. It logs how many load.
func TestWassettePolicies(t *testing.T) {
	src := os.Getenv("MCPHOST_WASSETTE_DIR")
	if src == "" {
		t.Skip("skipping: MCPHOST_WASSETTE_DIR does not name a wassette checkout")
	}
	examples, _ := filepath.Glob(filepath.Join(src, "examples", "*", "policy.yaml"))
	if root := filepath.Join(src, "policy.yaml"); fileExists(root) {
		examples = append(examples, root)
	}
	others, _ := filepath.Glob(filepath.Join(src, "crates", "policy", "testdata", "*.yaml"))
	if len(examples) == 0 {
		t.Fatalf("no examples/*/policy.yaml under %s", src)
	}
	tmp := t.TempDir()
	copyIn := func(f string) string {
		t.Helper()
		rel, _ := filepath.Rel(src, f)
		dst := filepath.Join(tmp, strings.ReplaceAll(rel, string(filepath.Separator), "_"))
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	loaded := 0
	for _, f := range examples {
		p, err := ReadPolicy(copyIn(f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		loaded++
		t.Logf("%s: hosts %q, paths %d, env %q", f, p.AllowedHosts, len(p.AllowedPaths), p.EnvKeys)
		// fetch-rs writes its host as a URL.
		if strings.Contains(f, "fetch-rs") && !reflect.DeepEqual(p.AllowedHosts, []string{"rss.nytimes.com"}) {
			t.Errorf("%s: got hosts %q; want rss.nytimes.com", f, p.AllowedHosts)
		}
	}
	t.Logf("wassette examples: %d of %d policies load", loaded, len(examples))
	loaded = 0
	for _, f := range others {
		_, err := ReadPolicy(copyIn(f))
		var pe *PolicyError
		switch {
		case err == nil:
			loaded++
		case !errors.As(err, &pe) || pe.Line == 0:
			t.Errorf("%s: %v; want a *PolicyError with a line", f, err)
		default:
			t.Logf("%s: %v", filepath.Base(f), err)
		}
	}
	t.Logf("wassette crates/policy/testdata: %d of %d policies load (the rest grant what mcphost cannot map)", loaded, len(others))
}

func fileExists(f string) bool { _, err := os.Stat(f); return err == nil }

// FuzzPolicyYAML: any text either fails with a *PolicyError naming the
// file, or maps onto grants that hold what the mapping promises.
func FuzzPolicyYAML(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "policy", "*.yaml"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("a:\n  - b: [x, 'y', \"z\"]\n    c: d\n")
	f.Add("permissions:\n  network:\n    allow:\n      - host: []\n")
	f.Add("x: &a [*a]\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := parsePolicy("policy.yaml", []byte(text))
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.File != "policy.yaml" {
				t.Fatalf("got %v (%T); want a *PolicyError", err, err)
			}
			return
		}
		for _, h := range p.AllowedHosts {
			if err := limits.CheckAllowedHost(h); err != nil {
				t.Errorf("host %q: %v", h, err)
			}
		}
		for _, m := range p.AllowedPaths {
			if !strings.HasPrefix(m.Host, "/") || m.Host != m.Guest || !strings.HasPrefix(m.From, "policy.yaml:") {
				t.Errorf("mount %+v", m)
			}
		}
		for _, k := range p.EnvKeys {
			if badEnvName(k) {
				t.Errorf("env key %q", k)
			}
		}
		if p.Memory < 0 {
			t.Errorf("memory %d", p.Memory)
		}
	})
}
