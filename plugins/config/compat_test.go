package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCompatKeys(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "secrets.env")
	write(t, private, "TOKEN=abc\n")
	if err := os.Chmod(private, 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.env")
	write(t, open, "TOKEN=abc\n")
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		src     string
		wantErr string // "" means it parses
		check   func(t *testing.T, cfg *Config)
	}{
		{"all keys", `
[server]
strict_schemas = true
secrets_file = "secrets.env"
[[plugin]]
name = "a"
path = "a.wasm"
strict_schemas = false
allowed_secrets = ["TOKEN", "github/token"]
secrets_file = "secrets.env"
`, "", func(t *testing.T, cfg *Config) {
			if !cfg.Server.StrictSchemas || cfg.Server.SecretsFile != private {
				t.Errorf("server: got strict %v, secrets_file %q; want true, %q", cfg.Server.StrictSchemas, cfg.Server.SecretsFile, private)
			}
			s := cfg.Plugins[0]
			if s.StrictSchemas == nil || *s.StrictSchemas {
				t.Errorf("plugin strict_schemas: got %v; want false", s.StrictSchemas)
			}
			if want := []string{"TOKEN", "github/token"}; !reflect.DeepEqual(s.AllowedSecrets, want) {
				t.Errorf("allowed_secrets: got %q; want %q", s.AllowedSecrets, want)
			}
			if s.SecretsFile != private {
				t.Errorf("secrets_file: got %q; want %q", s.SecretsFile, private)
			}
		}},
		{"secrets file readable by others", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nsecrets_file = \"open.env\"\n",
			"has mode 0644: a secrets file must be readable by its owner only", nil},
		{"missing secrets file", "[server]\nsecrets_file = \"nope.env\"\n", "no such file", nil},
		{"bad secret name", "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nallowed_secrets = [\"A=B\"]\n", "may not contain '='", nil},
		{"strict_schemas not a bool", "[server]\nstrict_schemas = \"yes\"\n", "want a boolean", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig(filepath.Join(dir, "plugins.toml"), []byte(tt.src))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got error %v; want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got error %v; want one containing %q", err, tt.wantErr)
			case tt.check != nil:
				tt.check(t, cfg)
			}
		})
	}
}
