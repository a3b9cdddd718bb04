package source

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
)

// URL is a .wasm fetched over https and pinned by its SHA-256. The
// file is cached under its hash, so a restart (offline or not) serves it
// from the cache without asking the server again, and a changed pin
// fetches anew.
//
// With a [Signature] the pin is optional: every Fetch reads the Sigstore
// bundle (at Signature.URL, or the file's URL plus ".sigstore.json") and
// verifies it against the file's digest; without a pin the file is
// downloaded each time, since only its content says which it is.
type URL struct {
	url, sha256 string
	dir         string
	client      *http.Client
	sig         *Signature
	signer      *Signer
}

// NewURL returns the source of the .wasm at rawURL, pinned by its SHA-256
// (hex; may be "" with sig), cached in dir and fetched with client; with
// sig, the file must carry that signature.
func NewURL(rawURL, sha256Hex, dir string, client *http.Client, sig *Signature) *URL {
	return &URL{url: rawURL, sha256: sha256Hex, dir: dir, client: client, sig: sig}
}

// Signer is who signed what the last Fetch returned, or nil without a
// Signature.
func (u *URL) Signer() *Signer { return u.signer }

// Fetch returns the cached file, downloading it first when it is not
// cached.
func (u *URL) Fetch(ctx context.Context) (string, error) {
	if u.sig != nil {
		return u.fetchSigned(ctx)
	}
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
	resp, err := u.get(ctx, u.url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server said %s", resp.Status)
	}
	return storeVerified(file, resp.Body, u.sha256)
}

func (u *URL) get(ctx context.Context, rawURL string) (*http.Response, error) {
	if err := CheckURL(rawURL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	return u.client.Do(req)
}

// fetchSigned verifies the bundle against the pinned digest (the file may
// then come from the cache) or against a fresh download, and stores the
// file only once it is verified.
func (u *URL) fetchSigned(ctx context.Context) (string, error) {
	vf, err := newVerifier(ctx, u.sig)
	if err != nil {
		return "", &SignatureError{From: u.url, Err: err}
	}
	bundleURL := cmp.Or(u.sig.URL, u.url+".sigstore.json")
	var cands []candidate
	resp, err := u.get(ctx, bundleURL)
	if err != nil {
		return "", &FetchError{From: bundleURL, Err: err}
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		b, err := readLimited(resp.Body)
		if err != nil {
			return "", &FetchError{From: bundleURL, Err: err}
		}
		cands = append(cands, bundleCandidate(b, "bundle "+bundleURL))
	case http.StatusNotFound:
	default:
		return "", &FetchError{From: bundleURL, Err: fmt.Errorf("server said %s", resp.Status)}
	}
	if len(cands) == 0 {
		return "", &SignatureError{From: u.url, Err: fmt.Errorf("%w: %s is not there", ErrNoSignature, bundleURL)}
	}
	file := filepath.Join(u.dir, "url-sha256-"+u.sha256+".wasm")
	var wasm []byte
	if u.sha256 == "" {
		// Unpinned: only the content says which file this is.
		if wasm, err = u.body(ctx); err != nil {
			return "", &FetchError{From: u.url, Err: err}
		}
		h := sha256.Sum256(wasm)
		file = filepath.Join(u.dir, "url-sha256-"+hex.EncodeToString(h[:])+".wasm")
	} else {
		if _, ok := cached(file); !ok {
			if err := u.download(ctx, file); err != nil {
				return "", &FetchError{From: u.url, Err: err}
			}
		}
		if wasm, err = os.ReadFile(file); err != nil {
			return "", &FetchError{From: u.url, Err: err}
		}
	}
	if u.signer, err = vf.check(cands, wasm); err != nil {
		return "", &SignatureError{From: u.url, Err: err}
	}
	if u.sha256 == "" {
		h := sha256.Sum256(wasm)
		if err := storeVerified(file, bytes.NewReader(wasm), hex.EncodeToString(h[:])); err != nil {
			return "", &FetchError{From: u.url, Err: err}
		}
	}
	return file, nil
}

// body downloads the file into memory (at most maxDownload bytes).
func (u *URL) body(ctx context.Context) ([]byte, error) {
	resp, err := u.get(ctx, u.url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("server said %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDownload {
		return nil, fmt.Errorf("larger than %d MiB", maxDownload>>20)
	}
	return b, nil
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
