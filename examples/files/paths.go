package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// errOutside is returned for any path that leaves the served directory.
var errOutside = errors.New("outside the served directory")

// cleanRoot makes a configured root absolute and clean.
func cleanRoot(r string) string { return path.Clean("/" + r) }

// within reports whether p is root or below it (both clean).
func within(root, p string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// resolve turns a user-supplied path (relative to the root, absolute, or
// a file:// URI) into a clean absolute path below the root. When the path
// exists, symlinks are resolved and checked too.
func (s settings) resolve(p string) (string, error) {
	orig := p
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		u, err := url.PathUnescape(rest)
		if err != nil {
			return "", fmt.Errorf("path %q: %v", orig, err)
		}
		p = u
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q: contains a NUL byte", orig)
	}
	if !strings.HasPrefix(p, "/") {
		p = s.root + "/" + p
	}
	p = path.Clean(p)
	if !within(s.root, p) {
		return "", fmt.Errorf("path %q is %w %s", orig, errOutside, s.root)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p, nil // missing paths are reported by whoever opens them
	}
	realRoot, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		realRoot = s.root
	}
	if !within(filepath.ToSlash(realRoot), filepath.ToSlash(real)) {
		return "", fmt.Errorf("path %q resolves to %q, %w %s", orig, real, errOutside, s.root)
	}
	return p, nil
}

// rel returns p relative to the root ("." for the root itself).
func (s settings) rel(p string) string {
	if p == s.root {
		return "."
	}
	if s.root == "/" {
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(p, s.root+"/")
}

// fileURI returns the resource URI of absolute path p.
func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

// readLimited reads the regular file p, refusing files over max bytes.
func readLimited(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", p)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than the limit of %d (config max_bytes)", p, st.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s grew beyond the limit of %d bytes", p, max)
	}
	return b, nil
}

// mimeTypes covers common files; the Go mime package would consult
// system files, whose contents differ between machines.
var mimeTypes = map[string]string{
	".txt": "text/plain", ".log": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".html": "text/html", ".htm": "text/html",
	".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript", ".ts": "text/x-typescript",
	".go": "text/x-go", ".py": "text/x-python", ".rs": "text/x-rust", ".c": "text/x-c", ".h": "text/x-c",
	".java": "text/x-java", ".sh": "text/x-shellscript", ".sql": "application/sql",
	".json": "application/json", ".xml": "application/xml", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".ini": "text/plain", ".svg": "image/svg+xml",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".ico": "image/x-icon", ".bmp": "image/bmp", ".pdf": "application/pdf", ".zip": "application/zip",
	".gz": "application/gzip", ".tar": "application/x-tar", ".wasm": "application/wasm",
	".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".flac": "audio/flac", ".mp4": "video/mp4",
}

// mimeOf guesses a file's type from its extension; "" when unknown.
func mimeOf(p string) string { return mimeTypes[strings.ToLower(path.Ext(p))] }

// isText reports whether data should be served as text: it must be valid
// UTF-8 without NUL bytes, and its type (if known) must be textual.
func isText(mimeType string, data []byte) bool {
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return false
	}
	switch {
	case mimeType == "", strings.HasPrefix(mimeType, "text/"), mimeType == "image/svg+xml":
		return true
	case strings.HasPrefix(mimeType, "application/"):
		switch strings.TrimPrefix(mimeType, "application/") {
		case "json", "xml", "yaml", "toml", "sql":
			return true
		}
	}
	return false
}
