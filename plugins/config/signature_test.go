package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeKey(t *testing.T, file string, pub any) {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParseConfigSignature(t *testing.T) {
	dir := t.TempDir()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	writeKey(t, filepath.Join(dir, "cosign.pub"), p256.Public())
	os.WriteFile(filepath.Join(dir, "bad_root.json"), []byte(`{"mediaType": "nope"}`), 0o600)

	const oci = "[[plugin]]\nname = \"p\"\noci = \"ghcr.io/example/time-plugin:1.2\"\n"
	const keyless = "identity = \"https://github.com/example/time-plugin/.github/workflows/release.yml@refs/tags/v1.2\"\nissuer = \"https://token.actions.githubusercontent.com\"\n"
	tests := []struct {
		name string
		src  string
		want []string // pieces of each error, in order; none: valid
	}{
		{"keyless with a tag", oci + "[plugin.signature]\n" + keyless, nil},
		{"key", oci + "[plugin.signature]\nkey = \"cosign.pub\"\n", nil},
		{"url without sha256", "[[plugin]]\nname = \"p\"\nurl = \"https://example.com/p.wasm\"\nsignature_url = \"https://example.com/p.bundle\"\n[plugin.signature]\nkey = \"cosign.pub\"\n", nil},
		{"url without sha256 or signature", "[[plugin]]\nname = \"p\"\nurl = \"https://example.com/p.wasm\"\n", []string{`3: plugin "p": key "url": a url needs a sha256 pin`}},
		{"typo", oci + "[plugin.signature]\n" + keyless + "trusted_roots = \"x.json\"\n", []string{`7: plugin "p": key "signature.trusted_roots": unknown key (did you mean "trusted_root"?)`}},
		{"empty table", oci + "[plugin.signature]\n", []string{`4: plugin "p": key "signature": say whose signature to accept`}},
		{"identity alone", oci + "[plugin.signature]\nidentity = \"x\"\n", []string{`4: plugin "p": key "signature": missing issuer`}},
		{"issuer alone", oci + "[plugin.signature]\nissuer = \"x\"\n", []string{`4: plugin "p": key "signature": missing identity`}},
		{"key and identity", oci + "[plugin.signature]\n" + keyless + "key = \"cosign.pub\"\n", []string{`7: plugin "p": key "signature.key": set either key, or identity and issuer`}},
		{"key and trusted_root", oci + "[plugin.signature]\nkey = \"cosign.pub\"\ntrusted_root = \"bad_root.json\"\n", []string{`key "signature.trusted_root": a key-signed bundle`, `6: plugin "p": key "signature.trusted_root": `}},
		{"empty identity", oci + "[plugin.signature]\nidentity = \"\"\nissuer = \"x\"\n", []string{`5: plugin "p": key "signature.identity": must not be empty`}},
		{"on a local file", "[[plugin]]\nname = \"p\"\npath = \"p.wasm\"\n[plugin.signature]\nkey = \"cosign.pub\"\n", []string{`4: plugin "p": key "signature": a signature is checked on url and oci sources only`}},
		{"signature_url without a table", "[[plugin]]\nname = \"p\"\nurl = \"https://example.com/p.wasm\"\nsha256 = \"" + strings.Repeat("0", 64) + "\"\nsignature_url = \"https://example.com/b\"\n", []string{`5: plugin "p": key "signature_url": only used with a [plugin.signature] table`}},
		{"signature_url on oci", oci + "signature_url = \"https://example.com/b\"\n[plugin.signature]\nkey = \"cosign.pub\"\n", []string{`4: plugin "p": key "signature_url": only used with url`}},
		{"not a table", oci + "signature = \"cosign.pub\"\n", []string{`4: plugin "p": key "signature": want a table`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig(filepath.Join(dir, "p.toml"), []byte(tt.src))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("got %v; want no error", err)
				}
				if s := cfg.Plugins[0].Signature; s == nil || s.Key == "" && (s.Identity == "" || s.Issuer == "") || s.Key != "" && !filepath.IsAbs(s.Key) {
					t.Errorf("got signature %+v; want it read, with the key's path resolved", s)
				}
				return
			}
			var got []string
			for _, e := range unjoin(err) {
				var ce *ConfigError
				if !errors.As(e, &ce) {
					t.Errorf("error %v is %T; want *ConfigError", e, e)
					continue
				}
				got = append(got, strings.TrimPrefix(ce.Error(), filepath.Join(dir, "p.toml")+":"))
			}
			all := strings.Join(got, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("errors:\n%s\nwant one containing %q", all, w)
				}
			}
		})
	}
}
