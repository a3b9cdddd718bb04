package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/internal/cachefile"
)

// Source is where a plugin's Wasm comes from: a file ([File]), a Go
// package built on demand ([Go]), an https URL ([URL]) or an OCI registry
// ([OCI]). Fetch returns a local file holding the Wasm, fetching or
// building it first when needed; a file it took from a cache is marked
// used, so that eviction (least recently used first) keeps it.
type Source interface {
	Fetch(ctx context.Context) (file string, err error)
}

// File is a .wasm file named in the config.
type File string

// Fetch returns the file itself.
func (f File) Fetch(context.Context) (string, error) { return string(f), nil }

// Go is a Go main package built by [BuildGo].
type Go struct {
	dir  string
	opts BuildOptions
}

// NewGo returns the source of the Go main package in dir, built with opts.
func NewGo(dir string, opts BuildOptions) Go { return Go{dir: dir, opts: opts} }

// Fetch builds the package, or finds the build in the cache.
func (g Go) Fetch(ctx context.Context) (string, error) { return BuildGo(ctx, g.dir, g.opts) }

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
// SHA-256 is wantHex, which it records beside the file ([cachefile.Record]). Concurrent stores of the same file are harmless: the
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
	if err := cachefile.Record(file, wantHex); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// ChecksumError says a .wasm file does not match its sha256 pin.
type ChecksumError struct {
	File      string
	Want, Got string // hex
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("sha256 mismatch for %s: config pins %s, file has %s", e.File, e.Want, e.Got)
}
