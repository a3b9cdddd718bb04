package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseAuth(t *testing.T) {
	cfg, err := ParseConfig("p.toml", []byte(`
[auth]
resource = "https://mcp.example.com/mcp"
issuers = ["https://idp.example.com", "https://idp2.example.com/tenant"]
introspection_url = "https://idp.example.com/introspect"
client_id_env = "MCP_ID"
client_secret_env = "MCP_SECRET"
[auth.scopes]
"hash:use" = ["hash_*"]
"admin" = ["*_delete", "reset"]
"a.b" = ["x?"]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Auth{
		Resource:         "https://mcp.example.com/mcp",
		Issuers:          []string{"https://idp.example.com", "https://idp2.example.com/tenant"},
		IntrospectionURL: "https://idp.example.com/introspect",
		ClientIDEnv:      "MCP_ID",
		ClientSecretEnv:  "MCP_SECRET",
		Scopes: []ScopeRule{ // file order
			{Scope: "hash:use", Globs: []string{"hash_*"}},
			{Scope: "admin", Globs: []string{"*_delete", "reset"}},
			{Scope: "a.b", Globs: []string{"x?"}},
		},
		Line: 2,
	}
	if !reflect.DeepEqual(cfg.Auth, want) {
		t.Errorf("got  %+v\nwant %+v", cfg.Auth, want)
	}
	if cfg, _ := ParseConfig("p.toml", nil); cfg.Auth != nil {
		t.Errorf("no [auth]: got %+v; want nil", cfg.Auth)
	}
}

func TestParseAuthErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"missing keys", `
[auth]
jwks_uri = "https://x"
`, []string{`2: auth: key "resource": missing: the URL clients reach this server at, which tokens must carry in aud`,
			`2: auth: key "issuers": missing: the authorization servers whose tokens are trusted`,
			`3: auth: key "jwks_uri": unknown key (did you mean "jwks_url"?)`}},
		{"bad urls", `
[auth]
resource = "mcp.example.com"
issuers = ["https://ok", "idp"]
jwks_url = "ftp://keys"
`, []string{`3: auth: key "resource": "mcp.example.com": want this server's absolute http(s) URL without a fragment, like "https://mcp.example.com/mcp"`,
			`4: auth: key "issuers": element 1: "idp" is not an absolute http(s) URL`,
			`5: auth: key "jwks_url": "ftp://keys" is not an absolute http(s) URL`}},
		{"introspection without credentials", `
[auth]
resource = "https://m/mcp"
issuers = ["https://i"]
introspection_url = "https://i/introspect"
client_id_env = "ID"
`, []string{`5: auth: key "introspection_url": needs client_id_env and client_secret_env: the environment variables holding the client credentials mcphost introspects with`}},
		{"credentials without introspection", `
[auth]
resource = "https://m/mcp"
issuers = ["https://i"]
client_secret_env = "S"
`, []string{`5: auth: key "client_secret_env": only used with introspection_url, which is not set`}},
		{"bad scopes", `
[auth]
resource = "https://m/mcp"
issuers = ["https://i"]
[auth.scopes]
"ok" = ["a*"]
"bad glob" = ["x"]
"glob" = ["[a-"]
"notarray" = "x"
`, []string{`7: auth: key "scopes.bad glob": "bad glob" is not a valid scope (no spaces, quotes or backslashes)`,
			`8: auth: key "scopes.glob": element 0: want a glob (as in path.Match: *, ?, [a-z]), got [a-`,
			`9: auth: key "scopes.notarray": want an array of globs of tool, prompt and resource-template names, got string`}},
		{"not a table", `
auth = 3
`, []string{`2: key "auth": want a table, got integer`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("p.toml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			var got []string
			for _, e := range unjoin(err) {
				got = append(got, strings.TrimPrefix(e.Error(), "p.toml:"))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
