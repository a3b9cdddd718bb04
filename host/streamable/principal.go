package streamable

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/mcphost/mcphost/host/auth"
)

// principal names the caller of an HTTP request for task ownership: with
// OAuth, a hash of the token's issuer and subject, so a task outlives the
// token it was created with; otherwise a hash of the Authorization header
// ("" when it sent none), so a task created with one credential is unknown
// to every other.
func principal(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if id, ok := r.Context().Value(identityKey{}).(*auth.Identity); ok {
		a = "oauth\x00" + id.Issuer + "\x00" + id.Subject
	}
	if a == "" {
		return ""
	}
	h := sha256.Sum256([]byte(a))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
