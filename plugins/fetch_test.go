package plugins

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
)

// parseTOML parses a plugins.toml given as text, resolving relative paths
// against dir.
func parseTOML(t *testing.T, dir, src string) *config.Config {
	t.Helper()
	cfg, err := config.ParseConfig(filepath.Join(dir, "plugins.toml"), []byte(src))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

func TestURLSource(t *testing.T) {
	ctx := context.Background()
	wasm := toolModule("fetched")
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/p.wasm" {
			http.NotFound(w, r)
			return
		}
		w.Write(wasm)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("test server at %s; want https on 127.0.0.1", srv.URL)
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "download")
	engine := newEngine(t)
	conf := func(path, sum string) *config.Config {
		return parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"web\"\nurl = %q\nsha256 = %q\n", srv.URL+path, sum))
	}
	build := func(client *http.Client, cfg *config.Config) *Generation {
		t.Helper()
		l := NewLoader(LoaderOptions{Engine: engine, DownloadCacheDir: cache, HTTPClient: client, Logger: discard()})
		g, err := l.Build(ctx, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(ctx) })
		return g
	}

	g := build(srv.Client(), conf("/p.wasm", sha256Hex(wasm)))
	if got := toolNames(g); strings.Join(got, ",") != "web_fetched" || len(g.Failures) != 0 {
		t.Fatalf("first start: got tools %q, failures %v; want web_fetched", got, g.Failures)
	}
	if hits.Load() != 1 {
		t.Errorf("first start: got %d requests; want 1", hits.Load())
	}

	// Offline restart: a client that cannot connect still gets the plugin.
	offline := &http.Client{Transport: failTransport{}}
	g = build(offline, conf("/p.wasm", sha256Hex(wasm)))
	if got := toolNames(g); strings.Join(got, ",") != "web_fetched" {
		t.Errorf("offline restart: got tools %q, failures %v; want web_fetched from the cache", got, g.Failures)
	}
	if hits.Load() != 1 {
		t.Errorf("offline restart: got %d requests in all; want still 1", hits.Load())
	}

	tests := []struct {
		name      string
		client    *http.Client
		path, sum string
		want      string
	}{
		{"wrong pin", srv.Client(), "/p.wasm", strings.Repeat("0", 64), "sha256 mismatch"},
		{"not found", srv.Client(), "/missing.wasm", strings.Repeat("1", 64), "404 Not Found"},
		{"untrusted certificate", newHTTPClient(), "/p.wasm", strings.Repeat("2", 64), "certificate"},
		{"offline and not cached", offline, "/p.wasm", strings.Repeat("3", 64), "offline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.client, conf(tt.path, tt.sum))
			var fe *source.FetchError
			if err := g.Failed("web"); !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want a FetchError mentioning %q", err, tt.want)
			}
		})
	}
}

// failTransport fails every request, like a machine with no network.
type failTransport struct{}

func (failTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("offline")
}

// countingTransport counts the requests that reach the network.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// pushImage pushes img to ref and returns ref pinned to its digest.
func pushImage(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref + "@" + d.String()
}

// wasmArtifact is an OCI Wasm artifact: one application/wasm layer.
func wasmArtifact(t *testing.T, wasm []byte) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static.NewLayer(wasm, "application/wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return mutate.ConfigMediaType(img, "application/vnd.wasm.config.v0+json")
}

// scratchImage is a FROM-scratch image holding /plugin.wasm.
func scratchImage(t *testing.T, wasm []byte) v1.Image {
	t.Helper()
	data := tarOf(t, map[string][]byte{"README": []byte("x"), "plugin.wasm": wasm})
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func tarOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"README", "plugin.wasm", "a.wasm", "b.wasm"} {
		b, ok := files[n]
		if !ok {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOCISource(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("registry at %s; want 127.0.0.1", host)
	}
	artifact := pushImage(t, host+"/plugins/clock:v1", wasmArtifact(t, toolModule("now")))
	scratch := pushImage(t, host+"/plugins/clock:v2", scratchImage(t, toolModule("later")))

	dir := t.TempDir()
	cache := filepath.Join(dir, "download")
	engine := newEngine(t)
	conf := func(ref string) *config.Config {
		return parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"clock\"\noci = %q\n", ref))
	}
	counter := &countingTransport{}
	l := NewLoader(LoaderOptions{Engine: engine, DownloadCacheDir: cache, HTTPClient: &http.Client{Transport: counter}, Logger: discard()})

	g1, err := l.Build(ctx, conf(artifact), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close(ctx)
	if got := toolNames(g1); strings.Join(got, ",") != "clock_now" {
		t.Fatalf("artifact: got tools %q, failures %v; want clock_now", got, g1.Failures)
	}
	// A reload whose config names another reference pulls and serves it.
	g2, err := l.Build(ctx, conf(scratch), g1)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(ctx)
	if got := toolNames(g2); strings.Join(got, ",") != "clock_later" {
		t.Fatalf("reload to the scratch image: got tools %q, failures %v; want clock_later", got, g2.Failures)
	}
	pulled := counter.n.Load()
	if pulled == 0 {
		t.Fatal("no request reached the registry")
	}

	// Offline restart: the registry is gone, both references come from the cache.
	srv.Close()
	for _, ref := range []string{artifact, scratch} {
		l := NewLoader(LoaderOptions{Engine: engine, DownloadCacheDir: cache, HTTPClient: &http.Client{Transport: failTransport{}}, Logger: discard()})
		g, err := l.Build(ctx, conf(ref), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Tools) != 1 {
			t.Errorf("offline restart with %s: got tools %q, failures %v; want one tool from the cache", ref, toolNames(g), g.Failures)
		}
		g.Close(ctx)
	}

	// An unknown digest fails with a FetchError (the registry is down, too).
	unknown := host + "/plugins/clock:v3@sha256:" + strings.Repeat("ab", 32)
	g3, err := l.Build(ctx, conf(unknown), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g3.Close(ctx)
	var fe *source.FetchError
	if err := g3.Failed("clock"); !errors.As(err, &fe) || fe.From != unknown {
		t.Errorf("unknown digest: got %v; want a FetchError for %s", err, unknown)
	}
}

// TestSourceDirMissing: a source key naming a missing directory, or a
// file, fails the plugin with an error that names the key, its line and
// the directory, before the go command runs (which would say only
// "fork/exec …: no such file or directory").
func TestSourceDirMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ source, want string }{
		{"nosuchdir", `key "source" of the [[plugin]] table at line 2: directory ` + filepath.Join(dir, "nosuchdir") + " does not exist"},
		{"file.go", `key "source" of the [[plugin]] table at line 2: ` + filepath.Join(dir, "file.go") + " is not a directory"},
	} {
		cfg := parseTOML(t, dir, fmt.Sprintf("\n[[plugin]]\nname = \"p\"\nsource = %q\n", tc.source))
		g, err := NewLoader(LoaderOptions{Logger: discard(), BuildCacheDir: filepath.Join(dir, "build")}).Build(t.Context(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Failures) != 1 || g.Failures[0].Plugin != "p" || !strings.Contains(g.Failures[0].Err.Error(), tc.want) {
			t.Errorf("source = %q: failures %v; want plugin p: %s", tc.source, g.Failures, tc.want)
		}
		g.Close(t.Context())
	}
}
