package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/logtest"
)

func TestResolveSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.env")
	write(t, file, "# tokens\nFILE_ONLY=from-file\nexport QUOTED = \"a b\"\nBOTH=file\n\n")
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.env")
	write(t, open, "X=1\n")
	if err := os.Chmod(open, 0o640); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.env")
	write(t, bad, "OK=1\nsupersecretvalue\n")
	if err := os.Chmod(bad, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPHOST_TEST_ENV_SECRET", "from-env")
	t.Setenv("BOTH", "env")
	tests := []struct {
		name    string
		spec    Spec
		server  ServerConfig
		want    map[string]string
		wantErr string
		wantLog int // "secret not set" warnings
	}{
		{"none allowed", Spec{Name: "p", SecretsFile: file}, ServerConfig{}, nil, "", 0},
		{"env and plugin file, env wins", Spec{Name: "p", SecretsFile: file,
			AllowedSecrets: []string{"MCPHOST_TEST_ENV_SECRET", "FILE_ONLY", "QUOTED", "BOTH"}}, ServerConfig{},
			map[string]string{"MCPHOST_TEST_ENV_SECRET": "from-env", "FILE_ONLY": "from-file", "QUOTED": "a b", "BOTH": "env"}, "", 0},
		{"server file", Spec{Name: "p", AllowedSecrets: []string{"FILE_ONLY"}}, ServerConfig{SecretsFile: file},
			map[string]string{"FILE_ONLY": "from-file"}, "", 0},
		{"only allowed names are read", Spec{Name: "p", SecretsFile: file, AllowedSecrets: []string{"QUOTED"}}, ServerConfig{},
			map[string]string{"QUOTED": "a b"}, "", 0},
		{"missing is empty and logged", Spec{Name: "p", AllowedSecrets: []string{"NOPE_NOT_SET"}}, ServerConfig{},
			map[string]string{}, "", 1},
		{"file readable by group", Spec{Name: "p", SecretsFile: open, AllowedSecrets: []string{"X"}}, ServerConfig{},
			nil, "mode 0640", 0},
		{"bad line names the line, not the value", Spec{Name: "p", SecretsFile: bad, AllowedSecrets: []string{"OK"}}, ServerConfig{},
			nil, "bad.env:2: want NAME=value", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, rec := logtest.New()
			got, err := ResolveSecrets(&tt.spec, &tt.server, log)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "supersecret") {
					t.Fatalf("got error %v; want one containing %q and no secret", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
			if n := len(rec.Matching("WARN secret not set")); n != tt.wantLog {
				t.Errorf("got %d warnings; want %d", n, tt.wantLog)
			}
			for _, r := range rec.Matching("") {
				for _, v := range tt.want {
					if v != "" && strings.Contains(r, v) {
						t.Errorf("log record %q holds a secret value", r)
					}
				}
			}
		})
	}
}
