package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChecks: each check of a Checks gets its key's value (paths made
// absolute), a refusal is a ConfigError at that key's line, and without
// the check the value is kept for the package that uses it.
func TestChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.toml")
	pin := strings.Repeat("a", 64)
	const keyless = "identity = \"i\"\nissuer = \"https://issuer.example\"\n"
	tests := []struct {
		name  string
		src   string
		calls []string // what the checks were asked, in order
		want  []string // the errors, without the file name
	}{
		{"url", "[[plugin]]\nname = \"p\"\nurl = \"https://e.example/p.wasm\"\nsha256 = \"" + pin + "\"\n",
			[]string{"url https://e.example/p.wasm"}, []string{`3: plugin "p": key "url": refused`}},
		{"pinned oci", "[[plugin]]\nname = \"p\"\noci = \"ghcr.io/a/b@sha256:" + pin + "\"\n",
			[]string{"oci ghcr.io/a/b@sha256:" + pin + " signed=false"}, []string{`3: plugin "p": key "oci": refused`}},
		{"signed oci", "[[plugin]]\nname = \"p\"\noci = \"ghcr.io/a/b:v1\"\n[plugin.signature]\nkey = \"k.pub\"\n",
			[]string{"oci ghcr.io/a/b:v1 signed=true", "key " + filepath.Join(dir, "k.pub")},
			[]string{`3: plugin "p": key "oci": refused`, `5: plugin "p": key "signature.key": refused`}},
		{"trusted root and bundle url", "[[plugin]]\nname = \"p\"\nurl = \"https://e.example/p.wasm\"\nsignature_url = \"https://e.example/b\"\n[plugin.signature]\n" + keyless + "trusted_root = \"r.json\"\n",
			[]string{"url https://e.example/p.wasm", "root " + filepath.Join(dir, "r.json"), "url https://e.example/b"},
			[]string{`3: plugin "p": key "url": refused`, `4: plugin "p": key "signature_url": refused`, `8: plugin "p": key "signature.trusted_root": refused`}},
		{"store", "[server]\nstore = \"redis://h:6379/0\"\n",
			[]string{"store redis://h:6379/0"}, []string{`2: server: key "store": refused`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			asked := func(what string) func(string) error {
				return func(v string) error { calls = append(calls, what+" "+v); return errors.New("refused") }
			}
			ck := Checks{URL: asked("url"), SignatureKey: asked("key"), TrustedRoot: asked("root"), Store: asked("store"),
				OCI: func(ref string, signed bool) error {
					calls = append(calls, fmt.Sprintf("oci %s signed=%v", ref, signed))
					return errors.New("refused")
				}}
			_, err := ck.ParseConfig(file, []byte(tt.src))
			var got []string
			for _, e := range unjoin(err) {
				var ce *ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("error %v is %T; want *ConfigError", e, e)
				}
				got = append(got, strings.TrimPrefix(ce.Error(), file+":"))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
			if !slices.Equal(calls, tt.calls) {
				t.Errorf("checks asked:\n got %q\nwant %q", calls, tt.calls)
			}
			if _, err := (Checks{}).ParseConfig(file, []byte(tt.src)); err != nil {
				t.Errorf("without checks: got %v; want the values kept for the packages that use them", err)
			}
		})
	}
}
