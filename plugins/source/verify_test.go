package source

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/mcphost/mcphost/plugins/internal/opfile"
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

// TestSignatureFilesBounded: the key, trusted_root and bundle files
// [plugin.signature] names are read through opfile: one over its limit,
// or reached through a link out of its directory, is refused with an
// error naming the file (and the limit).
func TestSignatureFilesBounded(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(name string, size int) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	secret := filepath.Join(outside, "key.pem")
	if err := os.WriteFile(secret, []byte("-----BEGIN PUBLIC KEY-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pem")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	wasm := write("p.wasm", 8)
	write("p.wasm.sigstore.json", maxBundle+1)
	for _, tc := range []struct {
		name string
		read func() error
		file string
		want error
		msg  string
	}{
		{"key over its limit", func() error { _, err := LoadPublicKey(write("big.pem", maxKey+1)); return err },
			"big.pem", &opfile.LimitError{}, "64 KiB"},
		{"key through a link out", func() error { _, err := LoadPublicKey(link); return err },
			"link.pem", &opfile.EscapeError{}, "leads outside"},
		{"trusted_root over its limit", func() error { _, err := LoadTrustedRoot(write("root.json", maxBundle+1)); return err },
			"root.json", &opfile.LimitError{}, "1 MiB"},
		{"bundle over its limit", func() error {
			_, _, err := verifyFile(t.Context(), wasm, &Signature{Key: link})
			return err
		}, "p.wasm.sigstore.json", &opfile.LimitError{}, "1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read()
			if err == nil {
				t.Fatal("read; want a refusal")
			}
			if !errors.As(err, reflect.New(reflect.TypeOf(tc.want)).Interface()) {
				t.Errorf("got %T %v; want a %T", err, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v; want it to name %s and say %q", err, tc.file, tc.msg)
			}
		})
	}
}
