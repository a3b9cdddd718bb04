package source

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
)

// URL is a .wasm fetched over https and pinned by its SHA-256. The
// file is cached under its hash, so a restart (offline or not) serves it
// from the cache without asking the server again, and a changed pin
// fetches anew.
type URL struct {
	url, sha256 string
	dir         string
	client      *http.Client
}

// NewURL returns the source of the .wasm at rawURL, pinned by its SHA-256
// (hex), cached in dir and fetched with client.
func NewURL(rawURL, sha256Hex, dir string, client *http.Client) *URL {
	return &URL{url: rawURL, sha256: sha256Hex, dir: dir, client: client}
}

// Fetch returns the cached file, downloading it first when it is not
// cached.
func (u *URL) Fetch(ctx context.Context) (string, error) {
	file := filepath.Join(u.dir, "url-sha256-"+u.sha256+".wasm")
	if f, ok := cached(file); ok {
		return f, nil
	}
	if err := u.download(ctx, file); err != nil {
		return "", &FetchError{From: u.url, Err: err}
	}
	return file, nil
}

func (u *URL) download(ctx context.Context, file string) error {
	if err := CheckURL(u.url); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.url, nil)
	if err != nil {
		return err
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server said %s", resp.Status)
	}
	return storeVerified(file, resp.Body, u.sha256)
}

// CheckURL accepts an absolute https URL with a host and no credentials.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https":
		return fmt.Errorf("want an https URL, got scheme %q", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("want an https URL with a host")
	case u.User != nil:
		return fmt.Errorf("credentials in the URL are not allowed")
	}
	return nil
}
