package config

import (
	"strings"
	"testing"
)

func TestRemoteSourceConfigErrors(t *testing.T) {
	pin := strings.Repeat("a", 64)
	tests := []struct{ name, src, want string }{
		{"url without sha256", `url = "https://example.com/p.wasm"`, `key "url": a url needs a sha256 pin`},
		{"url and path", `url = "https://example.com/p.wasm"` + "\nsha256 = \"" + pin + "\"\npath = \"a.wasm\"", `set only one of path, source, url and oci`},
		{"url and oci", `url = "https://example.com/p.wasm"` + "\noci = \"ghcr.io/a/b@sha256:" + pin + `"`, `set either url or oci, not both`},
		{"oci not a string", `oci = 3`, `key "oci"`},
	}
	for _, tt := range tests {
		_, err := ParseConfig("p.toml", []byte("[[plugin]]\nname = \"x\"\n"+tt.src+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
	cfg, err := ParseConfig("p.toml", []byte("[[plugin]]\nname = \"x\"\noci = \"ghcr.io/a/b:v1@sha256:"+pin+"\"\n"))
	if err != nil || cfg.Plugins[0].OCI != "ghcr.io/a/b:v1@sha256:"+pin {
		t.Errorf("valid oci: got %+v, %v; want the reference kept", cfg, err)
	}
}
