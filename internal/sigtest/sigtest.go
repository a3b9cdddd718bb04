// Package sigtest signs plugins for the tests of more than one package
// (plugins, which verifies signatures, and host, whose audit log names the
// signer): key-based Sigstore bundles as `cosign sign --key` writes them,
// and the PEM public keys a [plugin.signature] table pins. It is imported
// only by tests.
package sigtest

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"os"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"google.golang.org/protobuf/encoding/protojson"
)

// WritePublicKey writes pub to file as PEM, as `key = "…"` reads it.
func WritePublicKey(t testing.TB, file string, pub crypto.PublicKey) {
	t.Helper()
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
}

// KeyBundle signs artifact with a key: a message signature and nothing
// else, as `cosign sign --key` writes without a log.
func KeyBundle(t testing.TB, key crypto.Signer, artifact []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(artifact)
	var sig []byte
	var err error
	if _, ok := key.(ed25519.PrivateKey); ok {
		sig, err = key.Sign(rand.Reader, artifact, crypto.Hash(0))
	} else {
		sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256)
	}
	if err != nil {
		t.Fatal(err)
	}
	pb := &protobundle.Bundle{
		MediaType:            "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{}}},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
