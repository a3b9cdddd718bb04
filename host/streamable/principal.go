package streamable

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

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

// client names whom r is counted against by the per-client limits
// (max_in_flight_per_client, rate_per_client): its checked owner (the
// OAuth issuer and subject, or the static token's hash), else its
// address (see Handler.clientAddr). An unchecked Authorization header
// does not name it: a caller could change it with every request. key is
// for counting; name, for logs, holds nothing secret.
func (h *Handler) client(r *http.Request) (key, name string) {
	if o := h.ownerOf(r); o.checked {
		return "owner:" + o.key, o.name
	}
	a := h.clientAddr(r)
	return "addr:" + a, "address " + a
}

// clientAddr is the address of r's client: its peer's IP, unless the
// peer is one of Options.TrustedProxies; then X-Forwarded-For is read from
// the right (the entry the nearest proxy appended) past every trusted
// proxy, and the first address not trusted is the client. An entry that
// does not parse stops the walk at the last trusted hop: what lies to its
// left was written by whoever the proxy heard from, and anyone may write
// anything there. From any other peer X-Forwarded-For is ignored.
func (h *Handler) clientAddr(r *http.Request) string {
	peer := r.RemoteAddr
	if host, _, err := net.SplitHostPort(peer); err == nil {
		peer = host
	}
	addr, err := netip.ParseAddr(peer)
	if err != nil || !h.trusted(addr) {
		return peer
	}
	return forwardedFor(r.Header.Values("X-Forwarded-For"), addr, h.trusted).String()
}

// forwardedFor walks the X-Forwarded-For values right to left from peer, a
// trusted proxy, and returns the first hop that trusted does not accept
// (see Handler.clientAddr).
func forwardedFor(values []string, peer netip.Addr, trusted func(netip.Addr) bool) netip.Addr {
	client := peer
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(values[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[j]))
			if err != nil {
				return client
			}
			client = a.Unmap()
			if !trusted(client) {
				return client
			}
		}
	}
	return client
}

func (h *Handler) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range h.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
