package plugins

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/mcphost/mcphost/internal/sigtest"
	"github.com/mcphost/mcphost/plugins/source"
)

const (
	testIdentity = "https://github.com/example/time-plugin/.github/workflows/release.yml@refs/tags/v1.2"
	testIssuer   = "https://token.actions.githubusercontent.com"
)

// sigstoreFixture is a virtual Sigstore (Fulcio, Rekor and a TSA of its
// own) with its trusted_root.json written to dir, and a signing key pair
// written as a PEM public key.
type sigstoreFixture struct {
	vs       *ca.VirtualSigstore
	rootFile string
	key      *ecdsa.PrivateKey
	keyFile  string
}

func newSigstoreFixture(t *testing.T, dir string) *sigstoreFixture {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// The virtual Fulcio issues no SCTs, so the root lists no CT logs: a
	// private deployment without CT, where none are asked for.
	// Its Rekor log's ID is the hex of the key ID, where a trusted root
	// holds the raw bytes: fix it so that the root survives JSON.
	rekor := vs.RekorLogs()
	for id, tl := range rekor {
		tl.ID, _ = hex.DecodeString(id)
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, vs.TimestampingAuthorities(), rekor)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	f := &sigstoreFixture{vs: vs, rootFile: filepath.Join(dir, "trusted_root.json"), keyFile: filepath.Join(dir, "cosign.pub")}
	if err := os.WriteFile(f.rootFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sigtest.WritePublicKey(t, f.keyFile, f.key.Public())
	return f
}

// keylessBundle signs the artifact digest as cosign v3 does: a DSSE in-toto
// statement naming it, with a Fulcio certificate for identity and issuer,
// a Rekor entry with an inclusion proof, and a timestamp.
func (f *sigstoreFixture) keylessBundle(t *testing.T, identity, issuer string, digest v1.Hash) []byte {
	t.Helper()
	stmt, _ := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": "plugin", "digest": map[string]string{"sha256": digest.Hex}}},
		"predicateType": "https://sigstore.dev/cosign/sign/v1",
		"predicate":     map[string]any{},
	})
	e, err := f.vs.AttestAtTime(identity, issuer, stmt, time.Now().Add(time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	env := sc.(*bundle.Envelope).RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	var kv struct{ Kind, APIVersion string }
	json.Unmarshal(tle.CanonicalizedBody, &kv)
	tle.KindVersion = &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}
	tsrs, _ := e.Timestamps()
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries: []*protorekor.TransparencyLogEntry{tle},
			TimestampVerificationData: &protobundle.TimestampVerificationData{
				Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tsrs[0]}},
			},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: env.PayloadType,
			Signatures: []*protodsse.Signature{{Sig: sig}},
		}},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// attachBundle pushes bundleJSON as an OCI 1.1 referrer of the manifest
// subject (cosign v3's layout).
func attachBundle(t *testing.T, repo name.Repository, subject v1.Image, bundleJSON []byte) {
	t.Helper()
	desc, err := partial(subject)
	if err != nil {
		t.Fatal(err)
	}
	art, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static.NewLayer(bundleJSON, "application/vnd.dev.sigstore.bundle.v0.3+json"))
	if err != nil {
		t.Fatal(err)
	}
	// Without an artifactType field, a referrer's artifact type is its
	// config's media type (OCI 1.1).
	art = mutate.ConfigMediaType(art, "application/vnd.dev.sigstore.bundle.v0.3+json")
	art = mutate.Subject(art, *desc).(v1.Image)
	d, err := art.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(repo.Digest(d.String()), art); err != nil {
		t.Fatalf("push referrer: %v", err)
	}
}

func partial(img v1.Image) (*v1.Descriptor, error) {
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	size, err := img.Size()
	if err != nil {
		return nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Digest: d, Size: size}, nil
}

// attachLegacy pushes a cosign legacy signature of forDigest under the tag
// sha256-<hex of tagDigest>.sig: a simple-signing payload, and the
// annotations sign returns for it.
func attachLegacy(t *testing.T, repo name.Repository, forDigest, tagDigest v1.Hash, sign func(payload []byte) map[string]string) {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"critical": map[string]any{
		"identity": map[string]string{"docker-reference": repo.String()},
		"image":    map[string]string{"docker-manifest-digest": forDigest.String()},
		"type":     "cosign container image signature",
	}, "optional": nil})
	layer := static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json")
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, Annotations: sign(payload)})
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(repo.Tag("sha256-"+tagDigest.Hex+".sig"), img); err != nil {
		t.Fatalf("push legacy signature: %v", err)
	}
}

// legacyKey signs a legacy payload with key, as `cosign sign --key` did.
func legacyKey(t *testing.T, key *ecdsa.PrivateKey) func([]byte) map[string]string {
	return func(payload []byte) map[string]string {
		sum := sha256.Sum256(payload)
		sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)}
	}
}

// legacyKeyless signs a legacy payload keylessly, as cosign did before v3:
// the certificate and the Rekor entry's signed promise in annotations.
func (f *sigstoreFixture) legacyKeyless(t *testing.T, identity, issuer string) func([]byte) map[string]string {
	return func(payload []byte) map[string]string {
		e, err := f.vs.SignAtTime(identity, issuer, payload, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := e.SignatureContent()
		vc, _ := e.VerificationContent()
		certPEM, _ := cryptoutils.MarshalCertificateToPEM(vc.Certificate())
		entries, _ := e.TlogEntries()
		tle := entries[0].TransparencyLogEntry()
		rp := tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody), IntegratedTime: tle.IntegratedTime,
			LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)}
		set, err := f.vs.RekorSignPayload(rp)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := json.Marshal(map[string]any{"SignedEntryTimestamp": set, "Payload": rp})
		return map[string]string{
			"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sc.(*bundle.MessageSignature).Signature()),
			"dev.sigstore.cosign/certificate":    string(certPEM),
			"dev.sigstore.cosign/bundle":         string(rb),
		}
	}
}

// TestSignedOCI loads plugins whose [plugin.signature] is satisfied by a
// keyless bundle (as a referrer, through the API and through the
// referrers tag schema), a key-signed bundle and a legacy .sig tag, and
// refuses each tampering case with its reason while the other plugins load.
func TestSignedOCI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fx := newSigstoreFixture(t, dir)
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sigtest.WritePublicKey(t, filepath.Join(dir, "other.pub"), otherKey.Public())
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	sigtest.WritePublicKey(t, filepath.Join(dir, "ed.pub"), edPub)

	type pushed struct {
		ref string
		img v1.Image
		dg  v1.Hash
	}
	for _, referrersAPI := range []bool{true, false} {
		t.Run(fmt.Sprintf("referrersAPI=%v", referrersAPI), func(t *testing.T) {
			srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(referrersAPI)))
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			push := func(repo, tool string) pushed {
				img := wasmArtifact(t, toolModule(tool))
				pushImage(t, host+"/"+repo+":1.2", img)
				d, _ := img.Digest()
				return pushed{ref: host + "/" + repo + ":1.2", img: img, dg: d}
			}
			repoOf := func(p pushed) name.Repository { return mustTag(t, p.ref).Context() }
			manifest := func(img v1.Image) []byte { b, _ := img.RawManifest(); return b }

			keyless := push("p/keyless", "a")
			attachBundle(t, repoOf(keyless), keyless.img, fx.keylessBundle(t, testIdentity, testIssuer, keyless.dg))
			keyed := push("p/keyed", "b")
			attachBundle(t, repoOf(keyed), keyed.img, sigtest.KeyBundle(t, fx.key, manifest(keyed.img)))
			ed := push("p/ed", "c")
			attachBundle(t, repoOf(ed), ed.img, sigtest.KeyBundle(t, edKey, manifest(ed.img)))
			legacy := push("p/legacy", "d")
			attachLegacy(t, repoOf(legacy), legacy.dg, legacy.dg, legacyKey(t, fx.key))
			legacyKeyless := push("p/legacykeyless", "d2")
			attachLegacy(t, repoOf(legacyKeyless), legacyKeyless.dg, legacyKeyless.dg, fx.legacyKeyless(t, testIdentity, testIssuer))
			unsigned := push("p/unsigned", "e")
			wrongID := push("p/wrongid", "f")
			attachBundle(t, repoOf(wrongID), wrongID.img, fx.keylessBundle(t, "https://github.com/mallory/x/.github/workflows/r.yml@refs/heads/main", testIssuer, wrongID.dg))
			wrongIss := push("p/wrongiss", "g")
			attachBundle(t, repoOf(wrongIss), wrongIss.img, fx.keylessBundle(t, testIdentity, "https://accounts.example.com", wrongIss.dg))
			// A re-pushed tag: the legacy signature of the first image is
			// copied to the new image's signature tag.
			repushed := push("p/repushed", "h")
			old := repushed.dg
			repushed = push("p/repushed", "h2")
			attachLegacy(t, repoOf(repushed), old, repushed.dg, legacyKey(t, fx.key))
			// A tampered bundle: signed by the key, then its signature bytes flipped.
			tampered := push("p/tampered", "i")
			var tb map[string]any
			json.Unmarshal(sigtest.KeyBundle(t, fx.key, manifest(tampered.img)), &tb)
			ms := tb["messageSignature"].(map[string]any)
			raw, _ := base64.StdEncoding.DecodeString(ms["signature"].(string))
			raw[len(raw)-1] ^= 1
			ms["signature"] = base64.StdEncoding.EncodeToString(raw)
			tbJSON, _ := json.Marshal(tb)
			attachBundle(t, repoOf(tampered), tampered.img, tbJSON)

			keylessSig := fmt.Sprintf("identity = %q\nissuer = %q\ntrusted_root = %q\n", testIdentity, testIssuer, fx.rootFile)
			keySig := "key = \"cosign.pub\"\n"
			plugin := func(name, ref, sig string) string {
				return fmt.Sprintf("[[plugin]]\nname = %q\noci = %q\n[plugin.signature]\n%s\n", name, ref, sig)
			}
			conf := plugin("keyless", keyless.ref, keylessSig) +
				plugin("keyed", keyed.ref, keySig) +
				plugin("ed", ed.ref, "key = \"ed.pub\"\n") +
				plugin("legacy", legacy.ref, keySig) +
				plugin("legacykeyless", legacyKeyless.ref, keylessSig) +
				plugin("unsigned", unsigned.ref, keySig) +
				plugin("wrongid", wrongID.ref, keylessSig) +
				plugin("wrongiss", wrongIss.ref, keylessSig) +
				plugin("wrongkey", keyed.ref, "key = \"other.pub\"\n") +
				plugin("repushed", repushed.ref, keySig) +
				plugin("tampered", tampered.ref, keySig) +
				fmt.Sprintf("[[plugin]]\nname = \"plain\"\noci = %q\n", pushImage(t, host+"/p/plain:1", wasmArtifact(t, toolModule("z"))))
			l := NewLoader(LoaderOptions{Engine: newEngine(t), DownloadCacheDir: filepath.Join(dir, fmt.Sprint(referrersAPI)), Logger: discard()})
			g, err := l.Build(ctx, parseTOML(t, dir, conf), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(ctx)

			loads := []struct {
				plugin string
				want   source.Signer
			}{
				{"keyless", source.Signer{Identity: testIdentity, Issuer: testIssuer, Digest: keyless.dg.String()}},
				{"keyed", source.Signer{Key: keyFingerprint(t, fx.key.Public()), Digest: keyed.dg.String()}},
				{"ed", source.Signer{Key: keyFingerprint(t, edPub), Digest: ed.dg.String()}},
				{"legacy", source.Signer{Key: keyFingerprint(t, fx.key.Public()), Digest: legacy.dg.String()}},
				{"legacykeyless", source.Signer{Identity: testIdentity, Issuer: testIssuer, Digest: legacyKeyless.dg.String()}},
			}
			for _, tt := range loads {
				p := g.lookup(tt.plugin)
				if p == nil {
					t.Errorf("%s: not loaded: %v; want it verified and loaded", tt.plugin, g.Failed(tt.plugin))
					continue
				}
				got := p.Signer()
				if got == nil || got.Identity != tt.want.Identity || got.Issuer != tt.want.Issuer || got.Key != tt.want.Key || got.Digest != tt.want.Digest {
					t.Errorf("%s: got signer %+v; want %+v", tt.plugin, got, tt.want)
				}
			}
			if p := g.lookup("plain"); p == nil || p.Signer() != nil {
				t.Errorf("plain (no signature table): got %v, failure %v; want it loaded unsigned", p, g.Failed("plain"))
			}
			refusals := []struct {
				plugin string
				want   error
			}{
				{"unsigned", source.ErrNoSignature},
				{"wrongid", source.ErrIdentityMismatch},
				{"wrongiss", source.ErrIssuerMismatch},
				{"wrongkey", source.ErrBadSignature},
				{"repushed", source.ErrDigestChanged},
				{"tampered", source.ErrBadSignature},
			}
			for _, tt := range refusals {
				err := g.Failed(tt.plugin)
				var se *source.SignatureError
				if g.lookup(tt.plugin) != nil || !errors.Is(err, tt.want) || !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want.Error()) {
					t.Errorf("%s: got %v; want it refused with %q", tt.plugin, err, tt.want)
				}
			}
		})
	}
}

// TestSignedOCIReload re-pushes a signed tag with an unsigned image: the
// reload verifies again and refuses the new digest, and the verified one
// keeps serving.
func TestSignedOCIReload(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fx := newSigstoreFixture(t, dir)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/p/clock:1.2"
	img := wasmArtifact(t, toolModule("now"))
	pushImage(t, ref, img)
	raw, _ := img.RawManifest()
	attachBundle(t, mustTag(t, ref).Context(), img, sigtest.KeyBundle(t, fx.key, raw))
	cfg := parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"clock\"\noci = %q\n[plugin.signature]\nkey = \"cosign.pub\"\n", ref))
	l := NewLoader(LoaderOptions{Engine: newEngine(t), DownloadCacheDir: filepath.Join(dir, "dl"), Logger: discard()})
	g1, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close(ctx)
	if got := toolNames(g1); strings.Join(got, ",") != "clock_now" {
		t.Fatalf("signed tag: got %q, failures %v; want clock_now", got, g1.Failures)
	}
	pushImage(t, ref, wasmArtifact(t, toolModule("evil")))
	g2, err := l.Build(ctx, cfg, g1)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(ctx)
	if err := g2.Failed("clock"); !errors.Is(err, source.ErrNoSignature) {
		t.Errorf("re-pushed tag: got %v; want %v", err, source.ErrNoSignature)
	}
	if got := toolNames(g2); strings.Join(got, ",") != "clock_now" {
		t.Errorf("re-pushed tag: got tools %q; want the verified clock_now kept", got)
	}
}

// TestSignedURL verifies a url plugin against <url>.sigstore.json and
// against signature_url, with and without a sha256 pin.
func TestSignedURL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fx := newSigstoreFixture(t, dir)
	wasm := toolModule("fetched")
	files := map[string][]byte{
		"/p.wasm":               wasm,
		"/p.wasm.sigstore.json": sigtest.KeyBundle(t, fx.key, wasm),
		"/elsewhere.json":       sigtest.KeyBundle(t, fx.key, wasm),
		"/q.wasm":               toolModule("q"),
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer srv.Close()
	tests := []struct {
		name  string
		extra string // keys of the [[plugin]] table
		want  error  // nil: loads
	}{
		{"beside the file", fmt.Sprintf("url = %q\n", srv.URL+"/p.wasm"), nil},
		{"pinned", fmt.Sprintf("url = %q\nsha256 = %q\n", srv.URL+"/p.wasm", sha256Hex(wasm)), nil},
		{"signature_url", fmt.Sprintf("url = %q\nsignature_url = %q\n", srv.URL+"/p.wasm", srv.URL+"/elsewhere.json"), nil},
		{"another file's bundle", fmt.Sprintf("url = %q\nsignature_url = %q\n", srv.URL+"/q.wasm", srv.URL+"/elsewhere.json"), source.ErrDigestChanged},
		{"no bundle", fmt.Sprintf("url = %q\n", srv.URL+"/q.wasm"), source.ErrNoSignature},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parseTOML(t, dir, fmt.Sprintf("[[plugin]]\nname = \"web\"\n%s[plugin.signature]\nkey = \"cosign.pub\"\n", tt.extra))
			l := NewLoader(LoaderOptions{Engine: newEngine(t), DownloadCacheDir: filepath.Join(dir, fmt.Sprint(i)), HTTPClient: srv.Client(), Logger: discard()})
			g, err := l.Build(ctx, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(ctx)
			err = g.Failed("web")
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("got %v; want it loaded", err)
			case tt.want == nil && g.lookup("web").Signer() == nil:
				t.Errorf("loaded without a signer")
			case tt.want == nil && g.lookup("web").Digest() != sha256Hex(wasm):
				t.Errorf("digest %q; want %q, the sha256 of the code served", g.lookup("web").Digest(), sha256Hex(wasm))
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Errorf("got %v; want %v", err, tt.want)
			}
		})
	}
}

func mustTag(t *testing.T, ref string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

func keyFingerprint(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:])
}
