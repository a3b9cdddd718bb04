// Command testop is a small OpenID Provider for mcphost's authorization
// tests, built on zitadel/oidc's op package (an OpenID Certified
// implementation): it issues access tokens with the client-credentials
// grant, as JWTs or as opaque tokens, for the audience the client asks for
// with RFC 8707's resource parameter (or the client's default), serves
// RFC 7662 introspection, and rotates its signing key when told to.
//
// It is a test program: clients come from the -clients flag, state lives
// in memory, and it listens on loopback only.
//
//	testop -addr 127.0.0.1:0 -clients '[{"id":"a","secret":"s","audience":"http://127.0.0.1:9/mcp"}]'
//
// prints "issuer http://127.0.0.1:PORT" on stdout once it serves, then
// serves until SIGINT or SIGTERM (so `testop … &` in a shell keeps
// serving), or with -exit-with-stdin until its stdin closes (for tests:
// the test's end, even a crash, ends it). Extra endpoints:
//
//	POST /admin/rotate   a new signing key (the old one stays in the key set)
//	                     answers {"kid":"…"}
//	POST /admin/sign     signs {"claims":{…},"header":{…}} with the current
//	                     key, the header's members added to the protected
//	                     header (a crit the validator must refuse, say);
//	                     answers the compact JWS
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// client is one registered client (from -clients).
type client struct {
	ID       string        `json:"id"`
	Secret   string        `json:"secret"`
	Audience string        `json:"audience"` // used when the token request names no resource
	Opaque   bool          `json:"opaque"`   // issue opaque tokens (introspection only)
	TTL      time.Duration `json:"ttl"`      // token lifetime in ns; 0 means 5m, negative issues expired tokens
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen on `host:port` (loopback)")
	clientsJSON := flag.String("clients", "[]", "the clients, a JSON array of {id, secret, audience, opaque, ttl}")
	exitWithStdin := flag.Bool("exit-with-stdin", false, "exit when stdin closes (tests: the parent's end ends testop)")
	flag.Parse()
	var clients []client
	if err := json.Unmarshal([]byte(*clientsJSON), &clients); err != nil {
		log.Fatalf("testop: -clients: %v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("testop: %v", err)
	}
	issuer := "http://" + ln.Addr().String()
	st := newStorage(issuer, clients)
	var key [32]byte
	rand.Read(key[:])
	provider, err := op.NewProvider(&op.Config{CryptoKey: key}, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		log.Fatalf("testop: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /admin/rotate", func(w http.ResponseWriter, r *http.Request) {
		kid, err := st.rotate()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"kid":%q}`, kid)
	})
	mux.HandleFunc("POST /admin/sign", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Claims json.RawMessage `json:"claims"`
			Header map[string]any  `json:"header"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tok, err := st.sign(req.Claims, req.Header)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, tok)
	})
	mux.Handle("/", withResource(provider))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *exitWithStdin {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() { // ends with stdin, or the process
			io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}
	srv := &http.Server{Handler: mux}
	go func() { // ends when ctx does: Shutdown makes Serve return
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	fmt.Printf("issuer %s\n", issuer)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("testop: %v", err)
	}
}

// resourceKey carries the token request's RFC 8707 resource parameter:
// zitadel's ClientCredentialsTokenRequest does not see the request.
type resourceKey struct{}

func withResource(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/token") {
			if err := r.ParseForm(); err == nil {
				if res := r.PostForm.Get("resource"); res != "" {
					r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, res))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// signingKey is one RSA key pair (RS256).
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

// publicKey is a signing key as the key set shows it.
type publicKey struct{ *signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.signingKey.key.PublicKey }

// token is an issued access token, kept for introspection.
type token struct {
	id, clientID, subject string
	audience, scopes      []string
	expires               time.Time
}

// storage is op.Storage in memory: clients from -clients, tokens issued
// with the client-credentials grant, and the signing keys. Everything
// about users and browsers is refused.
type storage struct {
	issuer  string
	clients map[string]*client

	mu     sync.Mutex
	keys   []*signingKey // the last signs
	tokens map[string]*token
	nkeys  int
	ntoks  int
}

func newStorage(issuer string, clients []client) *storage {
	s := &storage{issuer: issuer, clients: map[string]*client{}, tokens: map[string]*token{}}
	for i := range clients {
		s.clients[clients[i].ID] = &clients[i]
	}
	if _, err := s.rotate(); err != nil {
		log.Fatalf("testop: %v", err)
	}
	return s
}

func (s *storage) rotate() (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nkeys++
	sk := &signingKey{id: fmt.Sprintf("key-%d", s.nkeys), key: k}
	s.keys = append(s.keys, sk)
	return sk.id, nil
}

// sign signs claims with the current key, as the provider signs its
// tokens (RS256, typ JWT, the key's kid), with header's members added.
func (s *storage) sign(claims []byte, header map[string]any) (string, error) {
	s.mu.Lock()
	k := s.keys[len(s.keys)-1]
	s.mu.Unlock()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.id)
	for name, v := range header {
		opts = opts.WithHeader(jose.HeaderKey(name), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k.key}, opts)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(claims)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

var errUnsupported = errors.New("testop supports the client-credentials grant only")

// opClient is a client as op sees it.
type opClient struct{ c *client }

func (c opClient) GetID() string                       { return c.c.ID }
func (c opClient) RedirectURIs() []string              { return nil }
func (c opClient) PostLogoutRedirectURIs() []string    { return nil }
func (c opClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c opClient) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c opClient) ResponseTypes() []oidc.ResponseType  { return nil }
func (c opClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c opClient) LoginURL(string) string { return "" }
func (c opClient) AccessTokenType() op.AccessTokenType {
	if c.c.Opaque {
		return op.AccessTokenTypeBearer
	}
	return op.AccessTokenTypeJWT
}
func (c opClient) IDTokenLifetime() time.Duration { return time.Hour }
func (c opClient) DevMode() bool                  { return false }
func (c opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c opClient) IsScopeAllowed(string) bool           { return true }
func (c opClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c opClient) ClockSkew() time.Duration             { return 0 }

// tokenRequest is a client-credentials token request: the client is the
// subject (its id; op splits opaque tokens' "id:subject" at the first colon
// and would cut a subject holding one).
type tokenRequest struct {
	subject  string
	audience []string
	scopes   []string
}

func (r *tokenRequest) GetSubject() string    { return r.subject }
func (r *tokenRequest) GetAudience() []string { return r.audience }
func (r *tokenRequest) GetScopes() []string   { return r.scopes }

func (s *storage) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c := s.clients[id]
	if c == nil || c.Secret != secret {
		return nil, errors.New("unknown client or wrong secret")
	}
	return opClient{c}, nil
}

func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c := s.clients[id]
	if c == nil {
		return nil, errors.New("unknown client")
	}
	aud := c.Audience
	if res, ok := ctx.Value(resourceKey{}).(string); ok {
		aud = res
	}
	return &tokenRequest{subject: id, audience: []string{aud}, scopes: scopes}, nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	tr, _ := req.(*tokenRequest)
	clientID := req.GetSubject() // the client-credentials grant: the client is the subject
	ttl := 5 * time.Minute
	if c := s.clients[clientID]; c != nil && c.TTL != 0 {
		ttl = c.TTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ntoks++
	t := &token{id: fmt.Sprintf("tok-%d", s.ntoks), clientID: clientID, subject: req.GetSubject(),
		audience: req.GetAudience(), scopes: req.GetScopes(), expires: time.Now().Add(ttl)}
	if tr != nil {
		t.audience = tr.audience
	}
	s.tokens[t.id] = t
	return t.id, t.expires, nil
}

// GetPrivateClaimsFromRequest puts the granted scopes into a JWT access
// token's scope claim (op leaves it out).
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, scopes []string) (map[string]any, error) {
	if len(req.GetScopes()) == 0 {
		return nil, nil
	}
	return map[string]any{"scope": strings.Join(req.GetScopes(), " ")}, nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	t := s.tokens[tokenID]
	s.mu.Unlock()
	if t == nil || t.subject != subject || time.Now().After(t.expires) {
		return errors.New("token unknown or expired")
	}
	resp.Active = true
	resp.Scope = t.scopes
	resp.ClientID = t.clientID
	resp.Subject = t.subject
	resp.Audience = t.audience
	resp.Issuer = s.issuer
	resp.Expiration = oidc.FromTime(t.expires)
	resp.TokenType = "Bearer"
	return nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if c := s.clients[id]; c == nil || c.Secret != secret {
		return errors.New("unknown client or wrong secret")
	}
	return nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c := s.clients[id]; c != nil {
		return opClient{c}, nil
	}
	return nil, errors.New("unknown client")
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1], nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, 0, len(s.keys))
	for _, k := range slices.Backward(s.keys) {
		out = append(out, publicKey{k})
	}
	return out, nil
}

func (s *storage) Health(context.Context) error { return nil }

// What follows is refused: no users, browsers or refresh tokens here.

func (s *storage) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *storage) SaveAuthCode(context.Context, string, string) error { return errUnsupported }
func (s *storage) DeleteAuthRequest(context.Context, string) error    { return errUnsupported }
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errUnsupported
}
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errUnsupported
}
func (s *storage) TerminateSession(context.Context, string, string) error { return errUnsupported }
func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrUnsupportedGrantType()
}
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", errUnsupported
}
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}
func (s *storage) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return errUnsupported
}
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errUnsupported
}
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errUnsupported
}
