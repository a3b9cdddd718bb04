package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sandbox"
)

const wassettePolicy = `# as wassette writes them
version: "1.0"
description: "Weather tool permissions"
permissions:
  storage:
    allow:
      - uri: "fs://%s"
        access: ["read", "write"]
      - uri: fs://%s # read only
        access: [read]
  network:
    allow:
      - host: "api.weather.com"
      - host: '*.example.com'
  environment:
    allow:
      - key: "MCPHOST_POLICY_TEST"
  resources:
    limits:
      memory: 512Mi
`

func TestPolicy(t *testing.T) {
	dir := t.TempDir()
	rw, ro := filepath.Join(dir, "rw"), filepath.Join(dir, "ro")
	os.Mkdir(rw, 0o755)
	os.Mkdir(ro, 0o755)
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(strings.NewReplacer("%s", rw).Replace(strings.Replace(wassettePolicy, "fs://%s # read", "fs://"+ro+" # read", 1))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPHOST_POLICY_TEST", "from the environment")
	p, err := ReadPolicy(pol)
	if err != nil {
		t.Fatal(err)
	}
	want := &Policy{
		AllowedHosts: []string{"api.weather.com", "*.example.com"},
		AllowedPaths: []sandbox.Mount{{Host: rw, Guest: rw}, {Host: ro, Guest: ro, ReadOnly: true}},
		EnvKeys:      []string{"MCPHOST_POLICY_TEST"},
		Memory:       512 << 20,
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("ReadPolicy:\n got %+v\nwant %+v", p, want)
	}

	// The TOML's own keys win; the rest comes from the policy.
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	os.WriteFile(filepath.Join(dir, "c.wasm"), []byte("\x00asm"), 0o644)
	cfg, err := LoadConfig(write("plugins.toml", `
[[plugin]]
name = "c"
path = "c.wasm"
policy = "policy.yaml"
allowed_hosts = ["only.example.org"]
`))
	if err != nil {
		t.Fatal(err)
	}
	spec := cfg.Plugins[0]
	if !reflect.DeepEqual(spec.AllowedHosts, []string{"only.example.org"}) || len(spec.AllowedPaths) != 2 ||
		spec.Env["MCPHOST_POLICY_TEST"] != "from the environment" || spec.MemoryPages != 8192 {
		t.Errorf("spec with policy: hosts %q, paths %v, env %v, pages %d", spec.AllowedHosts, spec.AllowedPaths, spec.Env, spec.MemoryPages)
	}
}

func TestPolicyRefuses(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"permissions:\n  network:\n    allow:\n      - cidr: 10.0.0.0/8\n", ":4: permissions.network.allow[0].cidr cannot be mapped"},
		{"permissions:\n  network:\n    deny:\n      - host: x\n", ":4: permissions.network.deny[0].host cannot be mapped"},
		{"permissions:\n  resources:\n    limits:\n      cpu: 500m\n", ":4: permissions.resources.limits.cpu cannot be mapped"},
		{"permissions:\n  storage:\n    allow:\n      - uri: fs://relative\n", ":4: uri \"fs://relative\": want fs:///absolute/path"},
		{"permissions:\n  storage:\n    allow:\n      - uri: \"fs:///work/**\"\n", ":4: uri \"fs:///work/**\": glob patterns"},
		{"permissions:\n  storage:\n    allow:\n      - uri: fs:///x\n        access: [exec]\n", ":5: access \"exec\""},
		{"permissions: {network: {}}\n", ":1: {network: {}}: flow mappings"},
		{"just text\n", ":1: cannot read \"just text\""},
	} {
		f := filepath.Join(t.TempDir(), "policy.yaml")
		os.WriteFile(f, []byte(tt.yaml), 0o644)
		_, err := ReadPolicy(f)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want an error containing %q", tt.yaml, err, tt.want)
		}
	}
}

func FuzzPolicyYAML(f *testing.F) {
	f.Add(wassettePolicy)
	f.Add("a:\n  - b: [x, 'y', \"z\"]\n    c: d\n")
	f.Fuzz(func(t *testing.T, text string) {
		parsePolicyYAML("policy.yaml", text)
	})
}
