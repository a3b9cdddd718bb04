package plugins

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/sigtest"
	"github.com/mcphost/mcphost/plugins/config"
)

// TestParseConfigChecks: ParseConfig reports a value that the package
// owning its form refuses (source: url, oci, signature key and
// trusted_root; store: the store URL) as a ConfigError at its line and
// key, with that package's words, and accepts what it accepts.
func TestParseConfigChecks(t *testing.T) {
	dir := t.TempDir()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sigtest.WritePublicKey(t, filepath.Join(dir, "cosign.pub"), p256.Public())
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	sigtest.WritePublicKey(t, filepath.Join(dir, "p384.pub"), p384.Public())
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	sigtest.WritePublicKey(t, filepath.Join(dir, "rsa.pub"), rsaKey.Public())
	if err := os.WriteFile(filepath.Join(dir, "bad_root.json"), []byte(`{"mediaType": "nope"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	pin := strings.Repeat("a", 64)
	const oci = "[[plugin]]\nname = \"p\"\noci = \"ghcr.io/example/time-plugin:1.2\"\n"
	const keyless = "identity = \"https://github.com/example/time-plugin/.github/workflows/release.yml@refs/tags/v1.2\"\nissuer = \"https://token.actions.githubusercontent.com\"\n"
	tests := []struct {
		name string
		src  string
		want []string // pieces of the errors; none: valid
	}{
		{"pinned oci", "[[plugin]]\nname = \"p\"\noci = \"ghcr.io/a/b:v1@sha256:" + pin + "\"\n", nil},
		{"keyless with a tag", oci + "[plugin.signature]\n" + keyless, nil},
		{"key", oci + "[plugin.signature]\nkey = \"cosign.pub\"\n", nil},
		{"signed url", "[[plugin]]\nname = \"p\"\nurl = \"https://example.com/p.wasm\"\nsignature_url = \"https://example.com/p.bundle\"\n[plugin.signature]\nkey = \"cosign.pub\"\n", nil},
		{"store", "[server]\nstore = \"redis://s1:26379?master_name=main&addr=s2:26379\"\n", nil},
		{"http url", "[[plugin]]\nname = \"p\"\nurl = \"http://example.com/p.wasm\"\nsha256 = \"" + pin + "\"\n", []string{`3: plugin "p": key "url": want an https URL`}},
		{"http signature_url", "[[plugin]]\nname = \"p\"\nurl = \"https://example.com/p.wasm\"\nsignature_url = \"http://example.com/b\"\n[plugin.signature]\nkey = \"cosign.pub\"\n", []string{`4: plugin "p": key "signature_url": want an https URL`}},
		{"a tag without a signature", oci, []string{`3: plugin "p": key "oci": reference "ghcr.io/example/time-plugin:1.2" has no digest`}},
		{"signed oci without a registry", "[[plugin]]\nname = \"p\"\noci = \"example/p:1\"\n[plugin.signature]\nkey = \"cosign.pub\"\n", []string{`3: plugin "p": key "oci": reference "example/p:1" names no registry`}},
		{"missing key file", oci + "[plugin.signature]\nkey = \"missing.pub\"\n", []string{`5: plugin "p": key "signature.key": open `}},
		{"a device", oci + "[plugin.signature]\nkey = \"/dev/zero\"\n", []string{`5: plugin "p": key "signature.key": /dev/zero is not a regular file`}},
		{"P-384 key", oci + "[plugin.signature]\nkey = \"p384.pub\"\n", []string{`5: plugin "p": key "signature.key": `, `want P-256 or an Ed25519 key`}},
		{"RSA key", oci + "[plugin.signature]\nkey = \"rsa.pub\"\n", []string{`5: plugin "p": key "signature.key": `, `want an ECDSA P-256 or Ed25519 public key`}},
		{"bad trusted root", oci + "[plugin.signature]\n" + keyless + "trusted_root = \"bad_root.json\"\n", []string{`7: plugin "p": key "signature.trusted_root": `, `not a Sigstore trusted_root.json`}},
		{"store database", "[server]\nstore = \"redis://h:6379/x\"\n", []string{`2: server: key "store": store redis://h:6379/x: redis: invalid database number`}},
		{"store cluster database", "[server]\nstore = \"redis://n1:7000/2?addr=n2:7000\"\n", []string{`2: server: key "store": store redis://n1:7000/2?addr=n2:7000: Redis Cluster has database 0 only`}},
	}
	file := filepath.Join(dir, "plugins.toml")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig(file, []byte(tt.src))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("got %v; want no error", err)
				}
				return
			}
			var ce *config.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v (%T); want a *config.ConfigError", err, err)
			}
			all := strings.ReplaceAll(err.Error(), file+":", "")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("errors:\n%s\nwant one containing %q", all, w)
				}
			}
		})
	}
}

// TestEffectiveLimits: a plugin's limits are its own, else the server's,
// and a plugin with a mount gets the config's hidden files.
func TestEffectiveLimits(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	file := filepath.Join(dir, "plugins.toml")
	src := "[server]\ncancel_grace = \"3s\"\nmax_message_bytes = \"1MiB\"\n\n" +
		"[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\ncancel_grace = \"500ms\"\nkv_max_keys = 7\nallowed_paths = [\".:/c:ro\"]\n\n" +
		"[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\n"
	cfg, err := ParseConfig(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		grace  time.Duration
		kvKeys int64
		hidden []string
	}{
		{500 * time.Millisecond, 7, cfg.Hidden()},
		{3 * time.Second, config.DefaultKVMaxKeys, nil},
	}
	for i, want := range tests {
		lim := effectiveLimits(&cfg.Plugins[i], &cfg.Server)
		if lim.CancelGrace != want.grace || lim.KVMaxKeys != want.kvKeys || lim.MaxInputBytes != 1<<20 || !slices.Equal(lim.Hidden, want.hidden) {
			t.Errorf("plugin %d: got cancel grace %v, kv keys %d, input %d, hidden %q; want %v, %d, %d, %q",
				i, lim.CancelGrace, lim.KVMaxKeys, lim.MaxInputBytes, lim.Hidden, want.grace, want.kvKeys, 1<<20, want.hidden)
		}
	}
	if len(cfg.Hidden()) == 0 {
		t.Fatal("Hidden() is empty; want at least the config file")
	}
}
