package source

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI is a Wasm plugin pulled from an OCI registry by a reference
// pinned to a manifest digest. The pulled file is cached under that
// digest, so a restart (offline or not) never asks the registry again, and
// a changed reference pulls anew.
//
// Two image layouts are understood: a Wasm artifact (a layer of media type
// application/wasm or a vnd.*wasm* layer type, as wasm-to-oci and wassette
// push it) and a FROM-scratch image holding plugin.wasm or a single other
// *.wasm file (as hyper-mcp publishes its plugins).
//
// With a [Signature], the reference may be a bare tag: every Fetch
// resolves it, verifies a signature of the manifest digest it names, and
// pulls (or takes from the cache) exactly that digest.
type OCI struct {
	ref    string
	dir    string
	client *http.Client
	sig    *Signature
	signer *Signer
}

// NewOCI returns the source of the image ref (see [ParseOCIRef], and
// [ParseSignedOCIRef] when sig is not nil), cached in dir and pulled with
// client; with sig, what it pulls must carry that signature.
func NewOCI(ref, dir string, client *http.Client, sig *Signature) *OCI {
	return &OCI{ref: ref, dir: dir, client: client, sig: sig}
}

// Signer is who signed what the last Fetch returned, or nil without a
// Signature.
func (o *OCI) Signer() *Signer { return o.signer }

// Fetch returns the cached file, pulling it first when it is not cached.
func (o *OCI) Fetch(ctx context.Context) (string, error) {
	var d name.Digest
	var err error
	if o.sig != nil {
		d, o.signer, err = o.verified(ctx)
		if err != nil {
			return "", err
		}
	} else if d, err = ParseOCIRef(o.ref); err != nil {
		return "", &FetchError{From: o.ref, Err: err}
	}
	file := filepath.Join(o.dir, "oci-"+strings.ReplaceAll(d.DigestStr(), ":", "-")+".wasm")
	if f, ok := cached(file); ok {
		return f, nil
	}
	if err := o.pull(ctx, d, file); err != nil {
		return "", &FetchError{From: o.ref, Err: err}
	}
	return file, nil
}

// ParseOCIRef parses "registry/repository[:tag]@sha256:<64 hex>". The
// registry and the digest are required: a reference that could move (a
// bare tag) or whose registry is implied is refused.
func ParseOCIRef(s string) (name.Digest, error) {
	if strings.Contains(s, "://") {
		return name.Digest{}, fmt.Errorf("want registry/repository:tag@sha256:…, without a scheme")
	}
	if !strings.Contains(s, "@") {
		return name.Digest{}, fmt.Errorf("reference %q has no digest: pin it as …@sha256:<hex>, or verify it with a [plugin.signature] table", s)
	}
	if err := checkRegistry(s, "@sha256:…"); err != nil {
		return name.Digest{}, err
	}
	d, err := name.NewDigest(s, name.StrictValidation)
	if err != nil {
		return name.Digest{}, err
	}
	if h, err := v1.NewHash(d.DigestStr()); err != nil || h.Algorithm != "sha256" {
		return name.Digest{}, fmt.Errorf("want a sha256 digest, got %q", d.DigestStr())
	}
	return d, nil
}

// ParseSignedOCIRef parses the reference of a plugin with a signature
// table: as [ParseOCIRef], but a tag alone is enough
// ("registry/repository:tag"), since the signature, not the digest, says
// what may load.
func ParseSignedOCIRef(s string) (name.Reference, error) {
	if strings.Contains(s, "@") {
		return ParseOCIRef(s)
	}
	if strings.Contains(s, "://") {
		return nil, fmt.Errorf("want registry/repository:tag, without a scheme")
	}
	if err := checkRegistry(s, ""); err != nil {
		return nil, err
	}
	return name.NewTag(s, name.StrictValidation)
}

// checkRegistry refuses a reference without an explicit registry; pin is
// what the example in the message ends with.
func checkRegistry(s, pin string) error {
	if reg, _, ok := strings.Cut(s, "/"); !ok || !strings.ContainsAny(reg, ".:") && reg != "localhost" {
		return fmt.Errorf("reference %q names no registry (want e.g. ghcr.io/owner/plugin:tag%s)", s, pin)
	}
	return nil
}

// remoteOptions are the options of every registry request.
func (o *OCI) remoteOptions(ctx context.Context) []remote.Option {
	tr := o.client.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	// Credentials come from the Docker config (docker login, credential
	// helpers), as for every other registry client; anonymous otherwise.
	return []remote.Option{remote.WithContext(ctx), remote.WithTransport(tr), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
}

func (o *OCI) pull(ctx context.Context, d name.Digest, file string) error {
	desc, err := remote.Get(d, o.remoteOptions(ctx)...)
	if err != nil {
		return err
	}
	if desc.MediaType.IsIndex() {
		return fmt.Errorf("%s is an image index: pin the digest of the Wasm image's own manifest", d.DigestStr())
	}
	img, err := desc.Image()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil {
			return err
		}
		if !isWasmMediaType(mt) {
			continue
		}
		dg, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed() // a Wasm layer is stored as is
		if err != nil {
			return err
		}
		defer rc.Close()
		return storeVerified(file, rc, dg.Hex)
	}
	for _, l := range layers {
		wasm, err := wasmFromLayer(l)
		if err != nil {
			return err
		}
		if wasm != nil {
			sum := sha256.Sum256(wasm)
			return storeVerified(file, bytes.NewReader(wasm), hex.EncodeToString(sum[:]))
		}
	}
	return errors.New("the image holds no Wasm layer and no *.wasm file")
}

func isWasmMediaType(mt types.MediaType) bool {
	s := string(mt)
	return s == "application/wasm" || strings.HasPrefix(s, "application/vnd.") && strings.HasSuffix(s, "+wasm")
}

// wasmFromLayer returns the Wasm file of a tar layer, or nil when it has
// none. It reads the whole layer so that its digest is verified.
func wasmFromLayer(l v1.Layer) ([]byte, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	wasm, err := wasmFromTar(rc)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, rc); err != nil { // the digest check happens at EOF
		return nil, err
	}
	return wasm, nil
}

// wasmFromTar returns plugin.wasm from a tar stream, or its only *.wasm
// file when there is no plugin.wasm, or nil when there is none. Files
// larger than maxDownload are refused.
func wasmFromTar(r io.Reader) ([]byte, error) {
	tr := tar.NewReader(r)
	var found []byte
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
		base := path.Base(h.Name)
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(base, ".wasm") {
			continue
		}
		if h.Size > maxDownload {
			return nil, fmt.Errorf("layer: %s is larger than %d MiB", h.Name, maxDownload>>20)
		}
		names = append(names, h.Name)
		if base != "plugin.wasm" && found != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxDownload))
		if err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
		if base == "plugin.wasm" {
			return b, nil
		}
		found = b
	}
	if len(names) > 1 {
		return nil, fmt.Errorf("layer holds several .wasm files (%s) and no plugin.wasm", strings.Join(names, ", "))
	}
	return found, nil
}
