package config

import (
	"cmp"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Auth is the [auth] table: OAuth 2.1 bearer tokens for the HTTP
// transport (validated by package host/auth). nil means no [auth] table.
type Auth struct {
	// Resource is this server's canonical URI; a token's aud must hold it
	// (RFC 8707).
	Resource string
	// Issuers are the trusted authorization servers (their issuer
	// identifiers), in file order.
	Issuers []string
	// Scopes map scopes to the names they unlock, in file order.
	Scopes []ScopeRule
	// JWKSURL, when set, is where every issuer's keys are fetched instead
	// of the jwks_uri of its metadata.
	JWKSURL string
	// IntrospectionURL, when set, is the RFC 7662 endpoint asked about
	// opaque (non-JWT) tokens, as the client whose id and secret are in the
	// environment variables ClientIDEnv and ClientSecretEnv.
	IntrospectionURL string
	ClientIDEnv      string
	ClientSecretEnv  string
	// Line is where the [auth] table starts (for messages).
	Line int
}

// ScopeRule is one entry of [auth.scopes]: a scope and the globs (as in
// path.Match) of the tool, prompt and resource-template names it unlocks.
type ScopeRule struct {
	Scope string
	Globs []string
}

var authKeys = []string{"resource", "issuers", "scopes", "jwks_url", "introspection_url", "client_id_env", "client_secret_env"}

func init() { topKeys = append(topKeys, "auth") }

// auth reads the [auth] table.
func (p *configParser) auth(s section, m map[string]any) *Auth {
	s.unknown(m, authKeys)
	a := &Auth{Line: p.loc.line("auth", "")}
	if v, ok := s.str(m, "resource"); ok {
		if u, err := url.Parse(v); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.Fragment != "" {
			s.errf("resource", "%q: want this server's absolute http(s) URL without a fragment, like \"https://mcp.example.com/mcp\"", v)
		} else {
			a.Resource = v
		}
	} else if _, present := m["resource"]; !present {
		s.errf("resource", "missing: the URL clients reach this server at, which tokens must carry in aud")
	}
	if v, ok := s.strings(m, "issuers"); ok {
		for i, iss := range v {
			if !absURL(iss) {
				s.errf("issuers", "element %d: %q is not an absolute http(s) URL", i, iss)
			}
		}
		if len(v) == 0 {
			s.errf("issuers", "must name at least one authorization server")
		}
		a.Issuers = v
	} else if _, present := m["issuers"]; !present {
		s.errf("issuers", "missing: the authorization servers whose tokens are trusted")
	}
	for _, key := range []string{"jwks_url", "introspection_url"} {
		v, ok := s.str(m, key)
		if !ok {
			continue
		}
		if !absURL(v) {
			s.errf(key, "%q is not an absolute http(s) URL", v)
			continue
		}
		if key == "jwks_url" {
			a.JWKSURL = v
		} else {
			a.IntrospectionURL = v
		}
	}
	a.ClientIDEnv, _ = s.str(m, "client_id_env")
	a.ClientSecretEnv, _ = s.str(m, "client_secret_env")
	if a.IntrospectionURL != "" && (a.ClientIDEnv == "" || a.ClientSecretEnv == "") {
		s.errf("introspection_url", "needs client_id_env and client_secret_env: the environment variables holding the client credentials mcphost introspects with")
	}
	if a.IntrospectionURL == "" && (a.ClientIDEnv != "" || a.ClientSecretEnv != "") {
		key := "client_secret_env"
		if a.ClientIDEnv != "" {
			key = "client_id_env"
		}
		s.errf(key, "only used with introspection_url, which is not set")
	}
	if v, ok := m["scopes"]; ok {
		t, isTable := v.(map[string]any)
		if !isTable {
			s.errf("scopes", "want a table of scope = [globs], got %s", tomlType(v))
		}
		for scope, e := range t {
			key := "scopes." + scope
			if scope == "" || strings.ContainsAny(scope, " \"\\") {
				s.errf(key, "%q is not a valid scope (no spaces, quotes or backslashes)", scope)
				continue
			}
			arr, ok := e.([]any)
			if !ok {
				s.errf(key, "want an array of globs of tool, prompt and resource-template names, got %s", tomlType(e))
				continue
			}
			rule := ScopeRule{Scope: scope}
			for i, g := range arr {
				str, ok := g.(string)
				if _, err := path.Match(str, ""); !ok || err != nil || str == "" {
					s.errf(key, "element %d: want a glob (as in path.Match: *, ?, [a-z]), got %v", i, g)
					continue
				}
				rule.Globs = append(rule.Globs, str)
			}
			a.Scopes = append(a.Scopes, rule)
		}
		slices.SortFunc(a.Scopes, func(x, y ScopeRule) int {
			return cmp.Or(cmp.Compare(s.line("scopes."+x.Scope), s.line("scopes."+y.Scope)), strings.Compare(x.Scope, y.Scope))
		})
	}
	return a
}

func absURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
