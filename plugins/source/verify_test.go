package source

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// TestPublicGoodRootOffline: with no network and no cached TUF copy, the
// error says what to do.
func TestPublicGoodRootOffline(t *testing.T) {
	opts := tuf.DefaultOptions().WithCachePath(t.TempDir()).WithRepositoryBaseURL("http://127.0.0.1:1")
	_, err := fetchRoot(opts)
	if err == nil || !strings.Contains(err.Error(), "no cached copy is usable") || !strings.Contains(err.Error(), "set trusted_root") {
		t.Errorf("got %v; want an error saying no cached copy is usable and to set trusted_root", err)
	}
}

// FuzzSignatureBundle feeds untrusted bundle bytes to the verifier: it
// must never panic, and never accept a signature by a key nobody used.
func FuzzSignatureBundle(f *testing.F) {
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":"AAAA"},"signature":"AAAA"}}`), []byte(nil))
	f.Add([]byte(`{}`), []byte(`{"critical":{"image":{"docker-manifest-digest":"sha256:00"}}}`))
	f.Add([]byte(`not json`), []byte(`not json`))
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pemBytes, _ := cryptoutils.MarshalPublicKeyToPEM(key.Public())
	file := filepath.Join(f.TempDir(), "k.pub")
	if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
		f.Fatal(err)
	}
	vf, err := newVerifier(f.Context(), &Signature{Key: file})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, bundleJSON, payload []byte) {
		c := bundleCandidate(bundleJSON, "fuzz")
		if len(payload) > 0 {
			c.payload = payload
		}
		s, err := vf.check([]candidate{c}, []byte("artifact"))
		if err == nil {
			t.Fatalf("accepted a signature nobody made: %+v", s)
		}
		if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrDigestChanged) && !errors.Is(err, ErrIdentityMismatch) {
			t.Errorf("got %v; want a bad signature or a digest change", err)
		}
	})
}

func TestParseSignedOCIRef(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0a", 32)
	tests := []struct {
		ref  string
		want string // "" means valid; else a piece of the error
	}{
		{"ghcr.io/owner/plugin:1.2", ""},
		{"ghcr.io/owner/plugin", "tag"}, // no implied :latest
		{"127.0.0.1:5000/p:v1", ""},
		{"ghcr.io/owner/plugin:v1@" + digest, ""},
		{"ghcr.io/owner/plugin@sha256:abc", "digest"},
		{"oci://ghcr.io/owner/plugin:v1", "without a scheme"},
		{"owner/plugin:v1", "names no registry"},
		{"ghcr.io/Owner/plugin:v1", "repository"},
	}
	for _, tt := range tests {
		_, err := ParseSignedOCIRef(tt.ref)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ParseSignedOCIRef(%q): got %v; want no error", tt.ref, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ParseSignedOCIRef(%q): got %v; want an error mentioning %q", tt.ref, err, tt.want)
		}
	}
}
