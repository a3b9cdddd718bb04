package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// fakeIssuer serves RFC 8414 metadata (or only OIDC discovery) and a JWKS
// from keys the test holds; it is not an authorization server (those tests
// are in host/streamable, against a real one), only what the validator
// reads.
type fakeIssuer struct {
	t        testing.TB
	srv      *httptest.Server
	issuer   string // srv.URL + path
	oidcOnly bool
	claimed  string // the issuer the metadata claims ("" = issuer)

	mu       sync.Mutex
	keys     []jwk.Key // private
	jwksGets atomic.Int32
}

func newFakeIssuer(t testing.TB, path string) *fakeIssuer {
	f := &fakeIssuer{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.issuer = f.srv.URL + path
	f.addKey("k1")
	return f
}

func (f *fakeIssuer) addKey(kid string) jwk.Key {
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.t.Fatal(err)
	}
	k, err := jwk.Import(raw)
	if err != nil {
		f.t.Fatal(err)
	}
	k.Set(jwk.KeyIDKey, kid)
	k.Set(jwk.AlgorithmKey, jwa.ES256())
	f.mu.Lock()
	f.keys = append(f.keys, k)
	f.mu.Unlock()
	return k
}

func (f *fakeIssuer) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(f.issuer, f.srv.URL)
	meta := func() {
		json.NewEncoder(w).Encode(map[string]string{"issuer": cmpStr(f.claimed, f.issuer), "jwks_uri": f.srv.URL + "/jwks"})
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server" + path:
		if f.oidcOnly {
			http.NotFound(w, r)
			return
		}
		meta()
	case path + "/.well-known/openid-configuration":
		meta()
	case "/jwks":
		f.jwksGets.Add(1)
		f.mu.Lock()
		set := jwk.NewSet()
		for _, k := range f.keys {
			set.AddKey(k)
		}
		f.mu.Unlock()
		pub, _ := jwk.PublicSetOf(set)
		w.Header().Set("Cache-Control", "max-age=3600")
		json.NewEncoder(w).Encode(pub)
	default:
		http.NotFound(w, r)
	}
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sign returns a JWT signed with key, with the standard claims for
// resource and the given overrides (and options of jwt.WithKey, such as
// protected headers).
func sign(t testing.TB, key jwk.Key, iss, aud string, claims map[string]any, opts ...jwt.Option) string {
	t.Helper()
	tok := jwt.New()
	tok.Set(jwt.IssuerKey, iss)
	tok.Set(jwt.AudienceKey, []string{aud})
	tok.Set(jwt.SubjectKey, "alice")
	tok.Set(jwt.ExpirationKey, time.Now().Add(time.Minute))
	for k, v := range claims {
		tok.Set(k, v)
	}
	b, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), key, opts...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signCrit signs a valid token whose protected header marks crit as
// critical extensions (and carries each of them).
func signCrit(t testing.TB, key jwk.Key, iss string, crit []string) string {
	t.Helper()
	hdrs := jws.NewHeaders()
	hdrs.Set(jws.CriticalKey, crit)
	for _, c := range crit {
		hdrs.Set(c, true)
	}
	return sign(t, key, iss, resource, nil, jws.WithProtectedHeaders(hdrs))
}

const resource = "https://mcp.example.com/mcp"

func newValidator(t *testing.T, cfg Config, every time.Duration) *Validator {
	t.Helper()
	if cfg.Resource == "" {
		cfg.Resource = resource
	}
	v, err := New(context.Background(), cfg, Options{RefreshEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

func TestValidateDiscovery(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		oidcOnly bool
		claimed  string
		err      error
	}{
		{"RFC 8414", "", false, "", nil},
		{"RFC 8414 with the path inserted", "/tenant/a", false, "", nil},
		{"OIDC discovery when RFC 8414 is missing", "/realms/x", true, "", nil},
		{"metadata claiming another issuer", "", false, "https://evil.example", ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeIssuer(t, tc.path)
			f.oidcOnly, f.claimed = tc.oidcOnly, tc.claimed
			v := newValidator(t, Config{Issuers: []string{f.issuer}}, 0)
			id, err := v.Validate(context.Background(), sign(t, f.keys[0], f.issuer, resource, map[string]any{"scp": []string{"a", "b"}, "azp": "app"}))
			if !errors.Is(err, tc.err) {
				t.Fatalf("got %v; want %v", err, tc.err)
			}
			if err == nil && (id.Subject != "alice" || id.ClientID != "app" || strings.Join(id.Scopes, " ") != "a b") {
				t.Errorf("identity %+v; want alice, app, [a b]", id)
			}
		})
	}
}

func TestValidateClaims(t *testing.T) {
	f := newFakeIssuer(t, "")
	v := newValidator(t, Config{Issuers: []string{f.issuer}}, 0)
	k := f.keys[0]
	tests := []struct {
		name  string
		token string
		why   string // "" means valid
	}{
		{"valid", sign(t, k, f.issuer, resource, map[string]any{"scope": "x y", "client_id": "c"}), ""},
		{"aud among several", sign(t, k, f.issuer, "", map[string]any{jwt.AudienceKey: []string{"other", resource}}), ""},
		{"skew tolerated", sign(t, k, f.issuer, resource, map[string]any{jwt.ExpirationKey: time.Now().Add(-10 * time.Second)}), ""},
		{"expired", sign(t, k, f.issuer, resource, map[string]any{jwt.ExpirationKey: time.Now().Add(-time.Minute)}), `"exp" not satisfied`},
		{"not yet valid", sign(t, k, f.issuer, resource, map[string]any{jwt.NotBeforeKey: time.Now().Add(time.Minute)}), `"nbf" not satisfied`},
		{"no exp", func() string {
			tok := jwt.New()
			tok.Set(jwt.IssuerKey, f.issuer)
			tok.Set(jwt.AudienceKey, resource)
			b, _ := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), k))
			return string(b)
		}(), `"exp"`},
		{"wrong audience", sign(t, k, f.issuer, "https://other.example/mcp", nil), `"aud" not satisfied`},
		{"untrusted issuer", sign(t, k, "https://evil.example", resource, nil), "not trusted"},
		{"opaque without introspection", "abc", "no introspection_url"},
		{"garbage", "a.b.c", "malformed"},
		// RFC 7515 section 4.1.11: a critical extension the recipient does
		// not understand makes the token invalid, signature or not.
		{"unknown crit", signCrit(t, k, f.issuer, []string{"x-unknown"}), `critical header extension "x-unknown" is not understood`},
		{"crit of two", signCrit(t, k, f.issuer, []string{"x-a", "x-b"}), `critical header extensions "x-a", "x-b" are not understood`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Validate(context.Background(), tc.token)
			switch {
			case tc.why == "" && err != nil:
				t.Errorf("got %v; want valid", err)
			case tc.why != "" && (!errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tc.why)):
				t.Errorf("got %v; want ErrInvalidToken mentioning %q", err, tc.why)
			}
		})
	}
}

// TestValidateUnknownKid: a token signed with a key the cache does not
// hold makes the validator refetch the issuer's keys, at most once per
// RefreshEvery, however many such tokens arrive.
func TestValidateUnknownKid(t *testing.T) {
	f := newFakeIssuer(t, "")
	v := newValidator(t, Config{Issuers: []string{f.issuer}}, time.Hour)
	ctx := context.Background()
	if _, err := v.Validate(ctx, sign(t, f.keys[0], f.issuer, resource, nil)); err != nil {
		t.Fatal(err)
	}
	k2 := f.addKey("k2") // rotated at the issuer
	before := f.jwksGets.Load()
	if _, err := v.Validate(ctx, sign(t, k2, f.issuer, resource, nil)); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if got := f.jwksGets.Load() - before; got != 1 {
		t.Errorf("fetches after rotation: %d; want 1", got)
	}
	for i := range 20 { // made-up kids within RefreshEvery: no more fetches
		k := f.addKey("made-up-" + string(rune('a'+i)))
		_, err := v.Validate(ctx, sign(t, k, f.issuer, resource, nil))
		if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "refreshed less than") {
			t.Fatalf("unknown kid %d: %v; want refused without a fetch", i, err)
		}
	}
	if got := f.jwksGets.Load() - before; got != 1 {
		t.Errorf("fetches after 20 unknown kids: %d; want still 1", got)
	}
}

func TestValidateUnavailable(t *testing.T) {
	f := newFakeIssuer(t, "")
	f.srv.Close() // the issuer is down
	v := newValidator(t, Config{Issuers: []string{f.issuer}}, time.Hour)
	for range 2 { // the second is refused without trying again
		_, err := v.Validate(context.Background(), sign(t, f.keys[0], f.issuer, resource, nil))
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("got %v; want ErrUnavailable", err)
		}
	}
}

// FuzzValidate: whatever the bytes, a token other than the one signed by
// the issuer's key is refused, as ErrInvalidToken (never ErrUnavailable: the issuer is up),
// and nothing panics.
func FuzzValidate(f *testing.F) {
	iss := newFakeIssuer(f, "")
	v, err := New(context.Background(), Config{Resource: resource, Issuers: []string{iss.issuer}}, Options{RefreshEvery: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	defer v.Close()
	good := sign(f, iss.keys[0], iss.issuer, resource, nil)
	if _, err := v.Validate(context.Background(), good); err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(good, ".")
	f.Add(good[:len(good)-2] + "AA")
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add("eyJhbGciOiJub25lIn0." + parts[1] + ".")
	f.Add("eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0." + parts[1] + "." + parts[2])
	f.Add("..")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, tok string) {
		_, err := v.Validate(context.Background(), tok)
		if err == nil && strings.HasPrefix(tok, parts[0]+"."+parts[1]+".") {
			return // the good token, or its signature spelt another way
		}
		if !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("Validate(%q) = %v; want ErrInvalidToken", tok, err)
		}
	})
}

// BenchmarkValidate is the cost [auth] adds to an HTTP request with a JWT:
// "verify" parses, checks an ES256 signature against cached keys and the
// claims (every new token); "seen" finds a token already verified (the
// same token again, as clients send it until it expires).
func BenchmarkValidate(b *testing.B) {
	f := newFakeIssuer(b, "")
	v, err := New(context.Background(), Config{Resource: resource, Issuers: []string{f.issuer}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	tok := sign(b, f.keys[0], f.issuer, resource, map[string]any{"scope": "a b c"})
	if _, err := v.Validate(context.Background(), tok); err != nil {
		b.Fatal(err)
	}
	var ns [2]float64
	for i, name := range []string{"verify", "seen"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if i == 0 {
					v.verified.mu.Lock()
					clear(v.verified.m)
					v.verified.mu.Unlock()
				}
				if _, err := v.Validate(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
			ns[i] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
	}
	if ns[1] > 0 {
		b.Logf("verify/seen: %.0fx", ns[0]/ns[1])
	}
}
