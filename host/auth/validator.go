package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/jwx/v3"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Identity is who a valid token speaks for.
type Identity struct {
	Subject  string // sub
	ClientID string // client_id, or azp when the token has no client_id
	Issuer   string
	Scopes   []string // scope (space-separated) or scp (an array)
}

// ErrInvalidToken is wrapped by every refusal of the token itself
// (malformed, untrusted issuer, wrong audience, expired, bad signature,
// inactive): the answer is 401 with error="invalid_token".
var ErrInvalidToken = errors.New("invalid token")

// ErrUnavailable is wrapped when the token could not be checked because an
// issuer's metadata, its keys or the introspection endpoint could not be
// fetched: the token may be fine, so the answer is 503, not 401.
var ErrUnavailable = errors.New("authorization server unavailable")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

// Config is the [auth] table as a [Validator] needs it: plain data, which
// cmd/mcphost copies from the parsed file (package plugins/config checks
// it), so this package does not link the configuration parser.
type Config struct {
	Resource string      // the aud every token must hold (RFC 8707)
	Issuers  []string    // trusted issuer identifiers, in file order
	Scopes   []ScopeRule // the policy, in file order
	JWKSURL  string      // "": each issuer's jwks_uri from its metadata

	// IntrospectionURL ("": opaque tokens are refused) is asked as the
	// client whose id and secret the two environment variables hold.
	IntrospectionURL, ClientIDEnv, ClientSecretEnv string
}

// Options tune a [Validator]; zero values mean the defaults.
type Options struct {
	// HTTPClient fetches metadata, keys and introspections (default: a
	// client with a 10s timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Skew is the clock skew allowed on exp and nbf (default 30s).
	Skew time.Duration
	// RefreshEvery bounds how often an unknown key id makes the validator
	// fetch an issuer's keys again (default 10s): a stream of tokens with
	// made-up kids must not turn into a stream of fetches.
	RefreshEvery time.Duration
	// Getenv reads the introspection client's credentials (default os.Getenv).
	Getenv func(string) string
}

const (
	defaultSkew         = 30 * time.Second
	defaultRefreshEvery = 10 * time.Second
	// Keys are refetched when their Cache-Control says they expire, but at
	// most every minKeyAge and at least every maxKeyAge.
	minKeyAge = 30 * time.Second
	maxKeyAge = time.Hour
)

// asymmetric are the signature algorithms accepted: never "none", never
// HMAC (a public key must not double as a shared secret).
var asymmetric = []jwa.SignatureAlgorithm{
	jwa.RS256(), jwa.RS384(), jwa.RS512(),
	jwa.PS256(), jwa.PS384(), jwa.PS512(),
	jwa.ES256(), jwa.ES384(), jwa.ES512(),
	jwa.EdDSA(),
}

// Validator checks bearer tokens against the [auth] configuration. Its
// methods are safe for concurrent use. Close stops its key refreshes.
type Validator struct {
	resource string
	policy   *Policy
	issuers  map[string]*issuer
	order    []string // issuers as configured
	cache    *jwk.Cache
	client   *http.Client
	log      *slog.Logger
	skew     time.Duration
	every    time.Duration
	intro    *introspector // nil: opaque tokens are refused
	stop     context.CancelFunc
	verified tokenCache // JWTs already verified (cache.go)
}

// issuer is one trusted authorization server and where its keys are.
type issuer struct {
	name    string
	mu      sync.Mutex
	jwksURL string    // "" until discovered
	tried   time.Time // the last failed discovery
	forced  time.Time // the last refresh asked for by an unknown kid
}

// New returns the validator of cfg. ctx bounds the background refresh of
// keys (Close also stops it). Issuers are discovered on first use, so an
// authorization server that is down at start does not stop mcphost.
func New(ctx context.Context, cfg Config, opts Options) (*Validator, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	v := &Validator{
		resource: cfg.Resource,
		policy:   NewPolicy(cfg.Scopes),
		issuers:  map[string]*issuer{},
		order:    slices.Clone(cfg.Issuers),
		client:   opts.HTTPClient,
		log:      opts.Logger,
		skew:     cmpOr(opts.Skew, defaultSkew),
		every:    cmpOr(opts.RefreshEvery, defaultRefreshEvery),
	}
	for _, iss := range cfg.Issuers {
		v.issuers[iss] = &issuer{name: iss, jwksURL: cfg.JWKSURL}
	}
	if cfg.IntrospectionURL != "" {
		id, secret := opts.Getenv(cfg.ClientIDEnv), opts.Getenv(cfg.ClientSecretEnv)
		if id == "" || secret == "" {
			return nil, fmt.Errorf("auth: introspection_url needs client credentials: %s and %s must be set and not empty", cfg.ClientIDEnv, cfg.ClientSecretEnv)
		}
		v.intro = &introspector{url: cfg.IntrospectionURL, id: id, secret: secret, client: opts.HTTPClient}
	}
	cctx, cancel := context.WithCancel(ctx)
	cache, err := jwk.NewCache(cctx, httprc.NewClient())
	if err != nil {
		cancel()
		return nil, fmt.Errorf("auth: key cache: %w", err)
	}
	v.cache, v.stop = cache, cancel
	return v, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Close stops refreshing keys.
func (v *Validator) Close() {
	v.stop()
}

// Resource returns the canonical URI tokens must be issued for.
func (v *Validator) Resource() string { return v.resource }

// Policy returns the scope policy.
func (v *Validator) Policy() *Policy { return v.policy }

// Validate checks a bearer token and returns whom it speaks for. A JWT
// (three dot-separated parts) is verified locally; anything else is
// introspected when introspection is configured. Errors wrap
// [ErrInvalidToken] or [ErrUnavailable].
func (v *Validator) Validate(ctx context.Context, token string) (*Identity, error) {
	if strings.Count(token, ".") != 2 {
		if v.intro == nil {
			return nil, invalid("not a JWT, and no introspection_url is configured for opaque tokens")
		}
		return v.introspect(ctx, token)
	}
	if id, ok := v.verified.get(token, time.Now()); ok {
		return id, nil
	}
	// Read iss before verifying, to know whose keys to verify with; the
	// claims are trusted only after jws.Verify below has checked the
	// signature with those keys (the payload it verifies is these bytes).
	msg, err := jws.Parse([]byte(token), jws.WithCompact())
	if err != nil {
		return nil, invalid("malformed JWT: %v", err)
	}
	if f := jwx.GuessFormat(msg.Payload()); f == jwx.JWS || f == jwx.JWE {
		return nil, invalid("nested JWTs are not accepted")
	}
	tok, err := jwt.Parse(msg.Payload(), jwt.WithVerify(false), jwt.WithValidate(false))
	if err != nil {
		return nil, invalid("malformed JWT claims: %v", err)
	}
	iss, _ := tok.Issuer()
	is := v.issuers[iss]
	if is == nil {
		return nil, invalid("issuer %q is not trusted (want one of %s)", iss, strings.Join(v.order, ", "))
	}
	jwksURL, err := v.keysOf(ctx, is)
	if err != nil {
		return nil, err
	}
	var fetchErr error
	kp := jws.KeyProviderFunc(func(_ context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
		alg, _ := sig.ProtectedHeaders().Algorithm()
		if !slices.Contains(asymmetric, alg) {
			return invalid("algorithm %q is not accepted (asymmetric algorithms only)", alg.String())
		}
		kid, _ := sig.ProtectedHeaders().KeyID()
		keys, err := v.keysFor(ctx, is, jwksURL, kid)
		if err != nil {
			fetchErr = err
			return err
		}
		found := false
		for _, k := range keys {
			if a, ok := k.Algorithm(); ok && a.String() != alg.String() {
				continue
			}
			if u, ok := k.KeyUsage(); ok && u != "sig" {
				continue // an encryption key must not verify signatures
			}
			if !keyFits(k.KeyType(), alg) {
				continue
			}
			sink.Key(alg, k)
			found = true
		}
		if !found {
			return invalid("no key of issuer %q fits kid %q and algorithm %s", iss, kid, alg.String())
		}
		return nil
	})
	// RFC 7515 section 4.1.11: a recipient must refuse a JWS whose crit
	// names an extension it does not understand. mcphost understands none
	// (it declares no jws.WithCritExtension), so jwx refuses any crit,
	// before a key is looked up. jwt.Parse cannot turn that check on with
	// a key provider, hence jws.Verify, then the claims on their own.
	_, err = jws.Verify([]byte(token), jws.WithCompact(), jws.WithKeyProvider(kp), jws.WithCritValidation(true))
	if fetchErr != nil {
		return nil, fetchErr
	}
	if err != nil {
		if crit := critical(msg); len(crit) > 0 {
			return nil, invalid("%s", critReason(crit))
		}
		if errors.Is(err, ErrInvalidToken) {
			return nil, err
		}
		return nil, invalid("%v", err)
	}
	err = jwt.Validate(tok,
		jwt.WithIssuer(iss),
		jwt.WithAudience(v.resource),
		jwt.WithAcceptableSkew(v.skew),
		jwt.WithRequiredClaim("exp"),
	)
	if err != nil {
		return nil, invalid("%v", err)
	}
	id := &Identity{Issuer: iss}
	id.Subject, _ = tok.Subject()
	var s string
	if tok.Get("client_id", &s) == nil {
		id.ClientID = s
	} else if tok.Get("azp", &s) == nil {
		id.ClientID = s
	}
	id.Scopes = scopesOf(tok)
	if exp, ok := tok.Expiration(); ok {
		v.verified.put(token, id, exp.Add(v.skew))
	}
	return id, nil
}

// critical returns the crit header of msg's signature (a compact JWS has
// one), for the reason given when jwx refuses it.
func critical(msg *jws.Message) []string {
	for _, sig := range msg.Signatures() {
		if crit, ok := sig.ProtectedHeaders().Critical(); ok {
			return crit
		}
	}
	return nil
}

// critReason is the plain reason a token with critical extensions is
// refused, for the client's error_description.
func critReason(crit []string) string {
	q := make([]string, len(crit))
	for i, c := range crit {
		q[i] = strconv.Quote(c)
	}
	if len(q) == 1 {
		return "critical header extension " + q[0] + " is not understood here (RFC 7515 section 4.1.11: such a token is refused)"
	}
	return "critical header extensions " + strings.Join(q, ", ") + " are not understood here (RFC 7515 section 4.1.11: such a token is refused)"
}

// scopesOf reads scope (a space-separated string) or scp (an array, or a
// string as some servers send it).
func scopesOf(tok jwt.Token) []string {
	var s string
	if tok.Get("scope", &s) == nil {
		return strings.Fields(s)
	}
	var arr []any
	if tok.Get("scp", &arr) == nil {
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	if tok.Get("scp", &s) == nil {
		return strings.Fields(s)
	}
	return nil
}

// keyFits reports whether a key of type kty can verify alg.
func keyFits(kty jwa.KeyType, alg jwa.SignatureAlgorithm) bool {
	a := alg.String()
	switch kty {
	case jwa.RSA():
		return strings.HasPrefix(a, "RS") || strings.HasPrefix(a, "PS")
	case jwa.EC():
		return strings.HasPrefix(a, "ES")
	case jwa.OKP():
		return a == "EdDSA"
	}
	return false // oct (symmetric) keys never verify
}

// keysFor returns the issuer's keys with id kid (every key when kid is
// ""). An unknown kid refetches the key set, at most every RefreshEvery
// per issuer: the issuer may have rotated its key.
func (v *Validator) keysFor(ctx context.Context, is *issuer, jwksURL, kid string) ([]jwk.Key, error) {
	set, err := v.cache.Lookup(ctx, jwksURL)
	if err != nil {
		return nil, fmt.Errorf("%w: keys of issuer %q from %s: %v", ErrUnavailable, is.name, jwksURL, err)
	}
	keys := pick(set, kid)
	if len(keys) > 0 || kid == "" {
		return keys, nil
	}
	is.mu.Lock()
	due := time.Since(is.forced) >= v.every
	if due {
		is.forced = time.Now()
	}
	is.mu.Unlock()
	if !due {
		return nil, invalid("issuer %q has no key %q (keys refreshed less than %s ago)", is.name, kid, v.every)
	}
	v.log.Info("auth: unknown key id; refreshing the issuer's keys", "issuer", is.name, "kid", kid)
	set, err = v.cache.Refresh(ctx, jwksURL)
	if err != nil {
		return nil, fmt.Errorf("%w: refreshing keys of issuer %q from %s: %v", ErrUnavailable, is.name, jwksURL, err)
	}
	return pick(set, kid), nil
}

func pick(set jwk.Set, kid string) []jwk.Key {
	var out []jwk.Key
	for i := range set.Len() {
		k, _ := set.Key(i)
		if id, _ := k.KeyID(); kid == "" || id == kid {
			out = append(out, k)
		}
	}
	return out
}

// keysOf returns the issuer's jwks_uri, discovering it on first use and
// registering it with the key cache. A failed discovery is retried at
// most every RefreshEvery.
func (v *Validator) keysOf(ctx context.Context, is *issuer) (string, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.jwksURL != "" && v.cache.IsRegistered(ctx, is.jwksURL) {
		return is.jwksURL, nil
	}
	if is.jwksURL == "" {
		if !is.tried.IsZero() && time.Since(is.tried) < v.every {
			return "", fmt.Errorf("%w: issuer %q: metadata discovery failed less than %s ago", ErrUnavailable, is.name, v.every)
		}
		u, err := discover(ctx, v.client, is.name)
		if err != nil {
			is.tried = time.Now()
			v.log.Warn("auth: issuer metadata discovery failed; tokens from this issuer are refused until it succeeds", "issuer", is.name, "err", err)
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		is.jwksURL = u
	}
	err := v.cache.Register(ctx, is.jwksURL,
		jwk.WithHTTPClient(v.client),
		jwk.WithMinInterval(minKeyAge),
		jwk.WithMaxInterval(maxKeyAge),
	)
	if err != nil {
		v.log.Warn("auth: fetching the issuer's keys failed", "issuer", is.name, "jwks", is.jwksURL, "err", err)
		_ = v.cache.Unregister(ctx, is.jwksURL)
		return "", fmt.Errorf("%w: keys of issuer %q from %s: %v", ErrUnavailable, is.name, is.jwksURL, err)
	}
	v.log.Info("auth: issuer keys loaded", "issuer", is.name, "jwks", is.jwksURL)
	return is.jwksURL, nil
}
