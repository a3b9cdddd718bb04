package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxDocument bounds a metadata or introspection answer.
const maxDocument = 1 << 20

// discover finds an issuer's jwks_uri: RFC 8414 authorization server
// metadata first (the well-known suffix inserted before the issuer's path),
// then OpenID Connect discovery (appended to it). The document's issuer
// must be the issuer itself (RFC 8414 section 3.3), or a look-alike
// server could hand out its own keys.
func discover(ctx context.Context, client *http.Client, iss string) (string, error) {
	u, err := url.Parse(iss)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("issuer %q: not an absolute URL", iss)
	}
	p := strings.TrimSuffix(u.Path, "/")
	rfc8414 := *u
	rfc8414.Path = "/.well-known/oauth-authorization-server" + p
	oidc := *u
	oidc.Path = p + "/.well-known/openid-configuration"
	var errs []error
	for _, doc := range []string{rfc8414.String(), oidc.String()} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		err := getJSON(ctx, client, doc, &meta)
		switch {
		case err != nil:
			errs = append(errs, err)
		case meta.Issuer != iss:
			errs = append(errs, fmt.Errorf("%s: issuer is %q, want %q", doc, meta.Issuer, iss))
		case meta.JWKSURI == "":
			errs = append(errs, fmt.Errorf("%s: no jwks_uri", doc))
		default:
			return meta.JWKSURI, nil
		}
	}
	return "", fmt.Errorf("issuer %q: metadata: %w", iss, errors.Join(errs...))
}

func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	return nil
}
