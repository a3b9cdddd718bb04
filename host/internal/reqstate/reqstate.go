// Package reqstate seals and opens the requestState of 2026-07-28
// input_required rounds (host's inputrequired.go): what a request carries
// from one round to the next, signed with HMAC-SHA256 so that only this
// server's key (Options.RequestStateKey, shared by the replicas) made it,
// bound to one method and item, and with an expiry.
//
// It owns the encoding, base64url(JSON) "." base64url(HMAC-SHA256), and
// its checks. It does not own what goes in a round, which requests may
// carry one, or how a refusal is answered (package host).
package reqstate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// Lifetime bounds how long a requestState is accepted.
const Lifetime = time.Hour

// Body is the signed payload of a requestState.
type Body struct {
	Target    string                     `json:"t"` // method and item the state is bound to
	Expires   int64                      `json:"e"` // unix seconds
	Responses map[string]json.RawMessage `json:"r,omitempty"`
	// Consent lists the consent questions (abi.ConsentInputKeyPrefix)
	// this round asked: a retry's answer to one counts only if it was
	// asked, so no client grants what it was never asked about.
	Consent []string `json:"c,omitempty"`
}

// Sealer seals and opens requestStates with one key.
type Sealer struct {
	key []byte
}

// New returns a Sealer with key, or with a random key when it is empty
// (then only this process opens what it sealed).
func New(key []byte) *Sealer {
	if len(key) == 0 {
		key = make([]byte, 32)
		rand.Read(key)
	}
	return &Sealer{key: key}
}

// Seal encodes and signs body: base64url(JSON) "." base64url(HMAC-SHA256).
func (s *Sealer) Seal(body Body) string {
	j, _ := json.Marshal(body)
	payload := base64.RawURLEncoding.EncodeToString(j)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s *Sealer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Open verifies and decodes a requestState. Its errors ("malformed",
// "integrity check failed", "expired") are for the client to read.
func (s *Sealer) Open(state string) (*Body, error) {
	i := len(state) - 1
	for i >= 0 && state[i] != '.' {
		i--
	}
	if i < 0 {
		return nil, errors.New("malformed")
	}
	// Strict still skips CR and LF; re-encoding leaves one spelling per
	// signature (FuzzOpen found a line break accepted).
	sig, err := base64.RawURLEncoding.Strict().DecodeString(state[i+1:])
	if err != nil || base64.RawURLEncoding.EncodeToString(sig) != state[i+1:] || !hmac.Equal(sig, s.mac(state[:i])) {
		return nil, errors.New("integrity check failed")
	}
	j, err := base64.RawURLEncoding.DecodeString(state[:i])
	if err != nil {
		return nil, errors.New("malformed")
	}
	var body Body
	if err := json.Unmarshal(j, &body); err != nil {
		return nil, errors.New("malformed")
	}
	if time.Now().Unix() > body.Expires {
		return nil, errors.New("expired")
	}
	return &body, nil
}
