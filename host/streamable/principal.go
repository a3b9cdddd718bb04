package streamable

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// principal names the caller of an HTTP request for task ownership: a
// hash of its Authorization header ("" when it sent none), so a task
// created with one credential is unknown to every other.
func principal(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if a == "" {
		return ""
	}
	h := sha256.Sum256([]byte(a))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
