package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// introspector asks an RFC 7662 endpoint about opaque tokens, as a
// confidential client (HTTP Basic authentication).
type introspector struct {
	url, id, secret string
	client          *http.Client
}

// introspection is the part of an RFC 7662 answer that is used. aud may be
// a string or an array.
type introspection struct {
	Active   bool            `json:"active"`
	Scope    string          `json:"scope"`
	ClientID string          `json:"client_id"`
	Subject  string          `json:"sub"`
	Issuer   string          `json:"iss"`
	Audience json.RawMessage `json:"aud"`
	Exp      int64           `json:"exp"`
	Nbf      int64           `json:"nbf"`
}

// introspect validates an opaque token: active, issued by a trusted issuer
// (when the answer names one), for this resource, and not expired.
func (v *Validator) introspect(ctx context.Context, token string) (*Identity, error) {
	in := v.intro
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.id), url.QueryEscape(in.secret)) // RFC 6749 section 2.3.1
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: introspection at %s: %s", ErrUnavailable, in.url, resp.Status)
	}
	var r introspection
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%w: introspection at %s: %v", ErrUnavailable, in.url, err)
	}
	now := time.Now()
	switch {
	case !r.Active:
		return nil, invalid("the token is not active (introspection)")
	case r.Issuer != "" && v.issuers[r.Issuer] == nil:
		return nil, invalid("issuer %q is not trusted (introspection)", r.Issuer)
	case !slices.Contains(audiences(r.Audience), v.resource):
		return nil, invalid("audience %s does not contain %q (introspection)", r.Audience, v.resource)
	case r.Exp != 0 && now.After(time.Unix(r.Exp, 0).Add(v.skew)):
		return nil, invalid("the token expired at %s (introspection)", time.Unix(r.Exp, 0).UTC().Format(time.RFC3339))
	case r.Nbf != 0 && now.Add(v.skew).Before(time.Unix(r.Nbf, 0)):
		return nil, invalid("the token is not valid before %s (introspection)", time.Unix(r.Nbf, 0).UTC().Format(time.RFC3339))
	}
	return &Identity{Subject: r.Subject, ClientID: r.ClientID, Issuer: r.Issuer, Scopes: strings.Fields(r.Scope)}, nil
}

func audiences(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}
