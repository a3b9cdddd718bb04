package config

import (
	"fmt"
	"os"
	"strings"
)

// The keys that let hyper-mcp and mcp.run plugins run unmodified (issue 8):
// strict_schemas, allowed_secrets and secrets_file. They are parsed here,
// apart from the other keys, and hooked into [configParser.server] and
// [configParser.plugin] by one line each.

var (
	serverCompatKeys = []string{"strict_schemas", "secrets_file"}
	pluginCompatKeys = []string{"strict_schemas", "allowed_secrets", "secrets_file"}
)

func (s section) boolean(m map[string]any, key string) (bool, bool) {
	v, ok := m[key]
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		s.errf(key, "want a boolean, got %s", tomlType(v))
	}
	return b, ok
}

func (p *configParser) serverCompat(s section, m map[string]any, sc *ServerConfig) {
	if v, ok := s.boolean(m, "strict_schemas"); ok {
		sc.StrictSchemas = v
	}
	if v, ok := s.str(m, "secrets_file"); ok {
		sc.SecretsFile = p.secretsFile(s, v)
	}
}

func (p *configParser) pluginCompat(s section, m map[string]any, spec *Spec) {
	if v, ok := s.boolean(m, "strict_schemas"); ok {
		spec.StrictSchemas = &v
	}
	if names, ok := s.strings(m, "allowed_secrets"); ok {
		for i, n := range names {
			if msg := checkSecretName(n); msg != "" {
				s.errf("allowed_secrets", "element %d %q: %s", i, n, msg)
				continue
			}
			spec.AllowedSecrets = append(spec.AllowedSecrets, n)
		}
	}
	if v, ok := s.str(m, "secrets_file"); ok {
		spec.SecretsFile = p.secretsFile(s, v)
	}
}

// secretsFile resolves a secrets_file and checks it now, so that a file
// others can read is an error that names the line, not a surprise at load.
func (p *configParser) secretsFile(s section, v string) string {
	if v == "" {
		s.errf("secrets_file", "must not be empty (leave it out instead)")
		return ""
	}
	f := p.abs(v)
	if err := checkSecretsFile(f); err != nil {
		s.errf("secrets_file", "%v", err)
		return ""
	}
	return f
}

// checkSecretName validates an allowed_secrets entry: a name looked up in
// the environment and in secrets_file lines "NAME=value".
func checkSecretName(n string) string {
	switch {
	case n == "":
		return "empty name"
	case len(n) > 256:
		return "longer than 256 bytes"
	case strings.ContainsAny(n, "=\x00\n\r \t#"):
		return "a name may not contain '=', '#', spaces or control characters"
	}
	return ""
}

// checkSecretsFile requires a regular file that only its owner can read
// or write (mode 0600 or 0400), the rule ssh applies to private keys.
func checkSecretsFile(f string) error {
	fi, err := os.Stat(f)
	if err != nil {
		return err
	}
	return secretsMode(f, fi)
}

// secretsMode is checkSecretsFile's rule on f's information.
func secretsMode(f string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o: a secrets file must be readable by its owner only (chmod 600 %s)", f, perm, f)
	}
	return nil
}
