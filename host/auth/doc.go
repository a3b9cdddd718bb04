// Package auth is mcphost's OAuth 2.1 resource server logic for the HTTP
// transport: it validates the bearer tokens clients present and decides,
// from their scopes, which tools, prompts and resource templates each may
// use ([auth] in plugins.toml).
//
// It owns:
//
//   - finding each trusted issuer's keys (RFC 8414 authorization server
//     metadata, then OpenID Connect discovery, then jwks_uri, or an explicit
//     jwks_url), caching them, and refreshing them when they expire and,
//     rate-limited, when a token names a key id the cache does not hold;
//   - validating JWT access tokens: asymmetric signatures only, iss among
//     the issuers, aud holding the resource (RFC 8707), exp and nbf with a
//     small skew, only with signing keys of the algorithm's type, and no
//     crit header (RFC 7515 section 4.1.11: mcphost understands no
//     critical extension, so jwx refuses every one); all JOSE
//     work is lestrrat-go/jwx's; a verified JWT is remembered by hash for
//     up to a minute (cache.go);
//   - RFC 7662 introspection of opaque tokens, when configured;
//   - the scope policy: scope → globs of names ([Policy]);
//   - the RFC 9728 protected resource metadata document ([Validator.Metadata]).
//
// It does not own: where the token comes from or what the HTTP answers
// look like (package streamable), filtering lists or recording callers in
// the audit log (package host, through host.Caller), or parsing the [auth]
// table (package plugins/config; cmd/mcphost copies it into a [Config]).
package auth
