package streamable

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"

	"github.com/mcphost/mcphost/host/auth"
)

// owner is whom an HTTP request speaks for: the sessions and the tasks it
// creates belong to it, and a request from anyone else finds them as
// unknown as a made-up id would be.
type owner struct {
	key string // a hash; "" for a request with no credentials at all
	// name says who it is in logs, without anything secret.
	name string
	// checked: mcphost verified the credential ([auth] or the static
	// token). Only then is a session bound to its owner: an unchecked
	// Authorization header (a proxy's business) may change with every
	// refresh.
	checked bool
}

// ownerOf names r's owner:
//   - with [auth], the token's issuer and subject (its client_id when it
//     has no subject), so a refreshed token is the same owner and another
//     user's token is not;
//   - with the static token (Options.AuthToken), that token, hashed: every
//     caller that passed the check holds it;
//   - otherwise, unchecked, a hash of the Authorization header, which
//     keeps tasks of callers with different headers apart ("" when it sent
//     none: every anonymous caller is one owner, and only the unguessable
//     ids separate them).
func (h *Handler) ownerOf(r *http.Request) owner {
	if id, ok := r.Context().Value(identityKey{}).(*auth.Identity); ok {
		who := "sub\x00" + id.Subject
		if id.Subject == "" {
			who = "client_id\x00" + id.ClientID
		}
		return owner{key: hashOf("oauth\x00" + id.Issuer + "\x00" + who), checked: true,
			name: fmt.Sprintf("sub %q client_id %q (issuer %q)", id.Subject, id.ClientID, id.Issuer)}
	}
	if h.check.token != nil {
		return owner{key: hashOf("token\x00" + string(h.check.token[:])), checked: true, name: "the static bearer token"}
	}
	a := r.Header.Get("Authorization")
	if a == "" {
		return owner{name: "anonymous"}
	}
	return owner{key: hashOf("header\x00" + a), name: "an unchecked Authorization header"}
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// owns reports whether r may use the session sid that o created. A
// refusal is logged, naming both, and the caller is answered 404 as for
// an unknown session: a leaked session id is no use to another identity,
// and the answer does not tell it the id exists.
func (h *Handler) owns(o owner, r *http.Request, sid string) bool {
	if !o.checked {
		return true
	}
	c := h.ownerOf(r)
	if c.key == o.key {
		return true
	}
	h.log.Warn("session refused: it belongs to another identity; answered as unknown",
		"session", shortID(sid), "owner", o.name, "caller", c.name, "remote", r.RemoteAddr)
	return false
}
