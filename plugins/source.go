package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// A source is where a plugin's Wasm comes from: a file (path), a Go
// package built on demand (source), an https URL (url) or an OCI registry
// (oci). fetch returns a local file holding the Wasm, fetching or building
// it first when needed, and reports the file as used so the cache keeps it.
type source interface {
	fetch(ctx context.Context) (file string, err error)
}

// sourceOf returns spec's source. Exactly one of its Path, Source, URL and
// OCI is set (ParseConfig checks that; specs built in code may not).
func (l *Loader) sourceOf(server *ServerConfig, spec *Spec) (source, error) {
	switch {
	case spec.Source != "":
		l.busy.Store(spec.Name, "build")
		return goSource{dir: spec.Source, opts: BuildOptions{CacheDir: l.cacheDir, Go: server.Go, Logger: l.log, Plugin: spec.Name}}, nil
	case spec.URL != "":
		return &urlSource{url: spec.URL, sha256: spec.SHA256, dir: l.downloadDir(), client: l.httpClient}, nil
	case spec.OCI != "":
		return &ociSource{ref: spec.OCI, dir: l.downloadDir(), client: l.httpClient}, nil
	case spec.Path != "":
		return fileSource(spec.Path), nil
	}
	return nil, errors.New("no path, source, url, oci or native module")
}

// fileSource is a .wasm file named in the config.
type fileSource string

func (f fileSource) fetch(context.Context) (string, error) { return string(f), nil }

// goSource is a Go main package built by [BuildGo].
type goSource struct {
	dir  string
	opts BuildOptions
}

func (g goSource) fetch(ctx context.Context) (string, error) { return BuildGo(ctx, g.dir, g.opts) }

// downloadDir is where url and oci sources keep what they fetched.
func (l *Loader) downloadDir() string {
	if l.dlDir != "" {
		return l.dlDir
	}
	if ucd, err := os.UserCacheDir(); err == nil {
		return filepath.Join(ucd, "mcphost", "download")
	}
	return filepath.Join(os.TempDir(), "mcphost-download")
}

// maxDownload bounds what a url or oci source may fetch: more than any
// plugin needs, little enough to stop a hostile server filling the disk.
const maxDownload = 256 << 20

// FetchError is a plugin whose Wasm could not be fetched from its url or
// oci reference and is not in the cache either.
type FetchError struct {
	From string // the url or oci reference
	Err  error
}

func (e *FetchError) Error() string { return fmt.Sprintf("fetch %s: %v", e.From, e.Err) }

func (e *FetchError) Unwrap() error { return e.Err }

// cached returns file when it exists, after marking it used now (the
// cache's eviction is least recently used first).
func cached(file string) (string, bool) {
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	now := time.Now()
	_ = os.Chtimes(file, now, now)
	return file, true
}

// storeVerified copies r into file through a temporary file in the same
// directory, failing without leaving anything behind unless the content's
// SHA-256 is wantHex. Concurrent stores of the same file are harmless: the
// content is identical and the rename is atomic.
func storeVerified(file string, r io.Reader, wantHex string) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".dl-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, maxDownload+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n > maxDownload {
		return fmt.Errorf("larger than %d MiB", maxDownload>>20)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != wantHex {
		return &ChecksumError{File: file, Want: wantHex, Got: got}
	}
	return os.Rename(tmp.Name(), file)
}

// newHTTPClient is the client url and oci sources use when the Loader was
// given none: its own, so nothing process-wide changes.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}
