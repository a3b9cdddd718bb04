package config

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcphost/mcphost/plugins/internal/opfile"
)

// ResolveSecrets reads the values of the plugin's allowed_secrets: each
// name from the environment, or else from its secrets_file (the server's
// when the plugin sets none). A name found in neither is logged (by name
// only) and left out, so the guest reads it as empty, as with hyper-mcp's
// keyring. Values never appear in errors or logs.
func ResolveSecrets(spec *Spec, server *ServerConfig, log *slog.Logger) (map[string]string, error) {
	if len(spec.AllowedSecrets) == 0 {
		return nil, nil
	}
	var file map[string]string
	if f := cmp.Or(spec.SecretsFile, server.SecretsFile); f != "" {
		var err error
		if file, err = readSecretsFile(f); err != nil {
			return nil, fmt.Errorf("secrets_file: %w", err)
		}
	}
	out := make(map[string]string, len(spec.AllowedSecrets))
	for _, name := range spec.AllowedSecrets {
		if v, ok := os.LookupEnv(name); ok {
			out[name] = v
		} else if v, ok := file[name]; ok {
			out[name] = v
		} else {
			log.Warn("secret not set in the environment or secrets_file; the plugin reads it as empty",
				"plugin", spec.Name, "secret", name)
		}
	}
	return out, nil
}

// readSecretsFile reads NAME=value lines, with the one reader of
// operator files (beneath its directory, at most [opfile.MaxSecrets]
// bytes), after checking that only the file's owner can read the file it
// opened. Blank lines and lines starting with # are skipped; a value may
// be wrapped in one pair of double or single quotes.
func readSecretsFile(f string) (map[string]string, error) {
	b, fi, err := opfile.Read(f, opfile.MaxSecrets)
	if err != nil {
		return nil, err
	}
	if err := secretsMode(f, fi); err != nil {
		return nil, err
	}
	return parseSecrets(f, b)
}

func parseSecrets(f string, b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		name = strings.TrimSpace(name)
		if !ok || checkSecretName(name) != "" {
			// The line may hold a secret: say where, never what.
			return nil, fmt.Errorf("%s:%d: want NAME=value", f, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[name] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	return out, nil
}
