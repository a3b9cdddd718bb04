package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Verifying a JWT (parse, signature, claims) costs about as much as the
// rest of a request (BenchmarkValidate), and a client sends the same token
// with every request until it expires. So a verified JWT is remembered, by
// its SHA-256, until its exp (plus the skew) or for at most maxVerifiedAge,
// whichever comes first: a key the issuer withdraws stops being trusted
// within that time even for tokens already seen. Opaque tokens are not
// remembered: introspection is how an issuer revokes them at once.

const (
	maxVerifiedAge = time.Minute
	maxVerified    = 4096 // tokens remembered at most
)

type tokenCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]verified
}

type verified struct {
	id    *Identity
	until time.Time
}

func (c *tokenCache) get(token string, now time.Time) (*Identity, bool) {
	k := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.until) {
		return nil, false
	}
	return e.id, true
}

func (c *tokenCache) put(token string, id *Identity, exp time.Time) {
	now := time.Now()
	until := now.Add(maxVerifiedAge)
	if exp.Before(until) {
		until = exp
	}
	if !now.Before(until) {
		return
	}
	k := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[sha256.Size]byte]verified)
	}
	if len(c.m) >= maxVerified {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxVerified {
			clear(c.m) // all live: start over rather than track use
		}
	}
	c.m[k] = verified{id: id, until: until}
}
