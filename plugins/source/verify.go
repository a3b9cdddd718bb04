package source

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/internal/opfile"
)

// Signature is a [plugin.signature] table: whose Sigstore signature a url
// or oci plugin must carry before it loads (config.Signature, which
// config reads from the file without linking Sigstore).
type Signature = config.Signature

// Signer is who a verified signature belongs to, and what it covered.
type Signer struct {
	Identity string `json:"identity,omitempty"` // certificate SAN (keyless)
	Issuer   string `json:"issuer,omitempty"`   // OIDC issuer (keyless)
	Key      string `json:"key,omitempty"`      // "sha256:<hex>" of the pinned key's DER form (key-based)
	Digest   string `json:"digest"`             // the verified OCI manifest or file, "sha256:<hex>"
	From     string `json:"from"`               // where the signature was found
}

// String names the signer in one phrase for logs and reports.
func (s *Signer) String() string {
	if s == nil {
		return ""
	}
	if s.Key != "" {
		return "key " + s.Key
	}
	return s.Identity + " (issuer " + s.Issuer + ")"
}

// The reasons a signature table is not satisfied; a refusal wraps one of
// them (errors.Is), followed by the details.
var (
	ErrNoSignature      = errors.New("no signature found")
	ErrIdentityMismatch = errors.New("identity mismatch")
	ErrIssuerMismatch   = errors.New("issuer mismatch")
	ErrBadSignature     = errors.New("bad signature")
	ErrDigestChanged    = errors.New("digest changed")
)

// SignatureError is a plugin refused because its signature table is not
// satisfied. Err wraps one of the reasons above.
type SignatureError struct {
	From string // the url or oci reference
	Err  error
}

func (e *SignatureError) Error() string { return fmt.Sprintf("signature of %s: %v", e.From, e.Err) }

func (e *SignatureError) Unwrap() error { return e.Err }

// bundleMediaType is what cosign v3 stores a Sigstore bundle as.
const bundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// maxBundle bounds a signature bundle or legacy payload: real ones are a
// few KiB. It bounds a signature trusted_root.json too: the public-good
// one is some 10 KiB.
const maxBundle = 1 << 20

// maxKey bounds a signature key file: a PEM public key is a few hundred
// bytes.
const maxKey = 64 << 10

// candidate is one signature found for an artifact: a bundle, and for
// legacy cosign signatures the signed payload (whose digest the bundle
// covers) instead of the artifact itself.
type candidate struct {
	bundle  *bundle.Bundle
	payload []byte // legacy simple-signing payload, or nil
	from    string
	err     error // why the signature could not be read (a bad signature)
}

// LoadPublicKey reads a PEM public key file and checks that it is an
// ECDSA P-256 or Ed25519 key.
func LoadPublicKey(file string) (crypto.PublicKey, error) {
	b, _, err := opfile.Read(file, maxKey)
	if err != nil {
		return nil, err
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PEM public key: %w", file, err)
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%s: ECDSA key on %s: want P-256 or an Ed25519 key", file, k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
	default:
		return nil, fmt.Errorf("%s: %T: want an ECDSA P-256 or Ed25519 public key", file, pub)
	}
	return pub, nil
}

// LoadTrustedRoot reads a trusted_root.json.
func LoadTrustedRoot(file string) (*root.TrustedRoot, error) {
	b, _, err := opfile.Read(file, maxBundle)
	if err != nil {
		return nil, err
	}
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a Sigstore trusted_root.json: %w", file, err)
	}
	return tr, nil
}

// verifier is what checking one artifact against a Signature needs.
type verifier struct {
	sig    *Signature
	v      *verify.Verifier
	keyFpr string
}

// newVerifier builds the trust material of sig and asks only for what it
// provides: a key-based bundle has no log entry or timestamp; a keyless
// one needs a transparency-log entry when the root lists logs, a signed
// timestamp when it lists only timestamping authorities, and SCTs when it
// lists CT logs (the public-good root lists all three).
func newVerifier(ctx context.Context, sig *Signature) (*verifier, error) {
	if sig.Key != "" {
		pub, err := LoadPublicKey(sig.Key)
		if err != nil {
			return nil, err
		}
		sv, err := signature.LoadVerifier(pub, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sig.Key, err)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(der)
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
		})
		v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
		if err != nil {
			return nil, err
		}
		return &verifier{sig: sig, v: v, keyFpr: "sha256:" + hex.EncodeToString(sum[:])}, nil
	}
	var tr *root.TrustedRoot
	var err error
	if sig.TrustedRoot != "" {
		tr, err = LoadTrustedRoot(sig.TrustedRoot)
	} else {
		tr, err = publicGoodRoot(ctx)
	}
	if err != nil {
		return nil, err
	}
	var opts []verify.VerifierOption
	switch {
	case len(tr.RekorLogs()) > 0:
		opts = append(opts, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	case len(tr.TimestampingAuthorities()) > 0:
		opts = append(opts, verify.WithSignedTimestamps(1))
	default:
		opts = append(opts, verify.WithCurrentTime())
	}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(tr, opts...)
	if err != nil {
		return nil, fmt.Errorf("trusted root: %w", err)
	}
	return &verifier{sig: sig, v: v}, nil
}

// check verifies the candidates for artifact (an OCI manifest or a Wasm
// file) and returns the signer of the first that passes, or the first
// reason none did. The whole artifact, not only its digest, is what an
// Ed25519 signature needs.
func (vf *verifier) check(cands []candidate, artifact []byte) (*Signer, error) {
	h := sha256.Sum256(artifact)
	digest := h[:]
	if len(cands) == 0 {
		return nil, ErrNoSignature
	}
	var first error
	for _, c := range cands {
		s, err := vf.checkOne(c, digest, artifact)
		if err == nil {
			return s, nil
		}
		if first == nil {
			first = fmt.Errorf("%w (%s)", err, c.from)
		}
	}
	if len(cands) > 1 {
		return nil, fmt.Errorf("%w; %d signatures found, none acceptable", first, len(cands))
	}
	return nil, first
}

func (vf *verifier) checkOne(c candidate, digest, artifact []byte) (*Signer, error) {
	want := "sha256:" + hex.EncodeToString(digest)
	if c.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, c.err)
	}
	if c.payload != nil {
		if got, err := payloadDigest(c.payload); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
		} else if got != want {
			return nil, fmt.Errorf("%w: the signature is for %s, the artifact is %s", ErrDigestChanged, got, want)
		}
	} else if err := coveredDigest(c.bundle, digest); err != nil {
		return nil, err
	}
	vc, err := c.bundle.VerificationContent()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	s := &Signer{Digest: want, From: c.from}
	var identity verify.PolicyOption
	if vf.sig.Key != "" {
		if vc.Certificate() != nil {
			return nil, fmt.Errorf("%w: signed keylessly by a certificate, plugins.toml pins a key", ErrBadSignature)
		}
		identity, s.Key = verify.WithKey(), vf.keyFpr
	} else {
		cert := vc.Certificate()
		if cert == nil {
			return nil, fmt.Errorf("%w: signed with a key, plugins.toml wants a keyless identity", ErrIdentityMismatch)
		}
		sum, err := certificate.SummarizeCertificate(cert)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		if sum.SubjectAlternativeName != vf.sig.Identity {
			return nil, fmt.Errorf("%w: signed by %q, plugins.toml wants %q", ErrIdentityMismatch, sum.SubjectAlternativeName, vf.sig.Identity)
		}
		if sum.Issuer != vf.sig.Issuer {
			return nil, fmt.Errorf("%w: issued by %q, plugins.toml wants %q", ErrIssuerMismatch, sum.Issuer, vf.sig.Issuer)
		}
		id, err := verify.NewShortCertificateIdentity(vf.sig.Issuer, "", vf.sig.Identity, "")
		if err != nil {
			return nil, err
		}
		identity, s.Identity, s.Issuer = verify.WithCertificateIdentity(id), sum.SubjectAlternativeName, sum.Issuer
	}
	signed := artifact
	if c.payload != nil {
		signed = c.payload
	}
	if _, err := vf.v.Verify(c.bundle, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(signed)), identity)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return s, nil
}

// coveredDigest checks that the bundle signs digest: a message
// signature's digest, or a subject of a DSSE in-toto statement (what
// cosign v3 signs an image with).
func coveredDigest(b *bundle.Bundle, digest []byte) error {
	sc, err := b.SignatureContent()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if m := sc.MessageSignatureContent(); m != nil {
		if m.DigestAlgorithm() == "SHA2_256" && !bytes.Equal(m.Digest(), digest) {
			return fmt.Errorf("%w: the signature is for sha256:%x, the artifact is sha256:%x", ErrDigestChanged, m.Digest(), digest)
		}
		return nil
	}
	env, ok := sc.(*bundle.Envelope)
	if !ok {
		return nil
	}
	st, err := env.Statement()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	want := hex.EncodeToString(digest)
	var got []string
	for _, sub := range st.GetSubject() {
		if d := sub.GetDigest()["sha256"]; d != "" {
			if d == want {
				return nil
			}
			got = append(got, "sha256:"+d)
		}
	}
	return fmt.Errorf("%w: the signature is for %v, the artifact is sha256:%s", ErrDigestChanged, got, want)
}

// payloadDigest reads the manifest digest out of a cosign simple-signing
// payload.
func payloadDigest(payload []byte) (string, error) {
	var p struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
			Type string `json:"type"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return "", fmt.Errorf("legacy signature payload: %w", err)
	}
	if p.Critical.Image.Digest == "" {
		return "", errors.New("legacy signature payload names no docker-manifest-digest")
	}
	return p.Critical.Image.Digest, nil
}

// parseBundle reads a Sigstore bundle (JSON).
func parseBundle(b []byte) (*bundle.Bundle, error) {
	var out bundle.Bundle
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("sigstore bundle: %w", err)
	}
	return &out, nil
}

// legacyBundle rebuilds a bundle from the parts cosign stores in a legacy
// .sig tag: the payload's signature, a certificate (keyless) or none
// (key-based), and the Rekor entry's signed promise when there is one
// (rekorJSON, the dev.sigstore.cosign/bundle annotation). Such an entry
// has a promise and no inclusion proof, which is what bundle v0.1 holds.
func legacyBundle(sig, certPEM, rekorJSON, payload []byte) (*bundle.Bundle, error) {
	sum := sha256.Sum256(payload)
	vm := &protobundle.VerificationMaterial{}
	mediaType := bundleMediaType
	if len(certPEM) > 0 {
		certs, err := cryptoutils.UnmarshalCertificatesFromPEM(certPEM)
		if err != nil || len(certs) == 0 {
			return nil, fmt.Errorf("legacy signature certificate: %v", err)
		}
		vm.Content = &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: certs[0].Raw}}
	} else {
		vm.Content = &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{}}
	}
	if len(rekorJSON) > 0 {
		var rb rekorBundle
		if err := json.Unmarshal(rekorJSON, &rb); err != nil {
			return nil, fmt.Errorf("legacy signature rekor bundle: %w", err)
		}
		body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
		if err != nil {
			return nil, fmt.Errorf("legacy signature rekor bundle body: %w", err)
		}
		logID, err := hex.DecodeString(rb.Payload.LogID)
		if err != nil {
			return nil, fmt.Errorf("legacy signature rekor bundle logID: %w", err)
		}
		var kv struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(body, &kv); err != nil {
			return nil, fmt.Errorf("legacy signature rekor bundle body: %w", err)
		}
		vm.TlogEntries = []*protorekor.TransparencyLogEntry{{
			LogIndex:          rb.Payload.LogIndex,
			LogId:             &protocommon.LogId{KeyId: logID},
			KindVersion:       &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion},
			IntegratedTime:    rb.Payload.IntegratedTime,
			InclusionPromise:  &protorekor.InclusionPromise{SignedEntryTimestamp: rb.SignedEntryTimestamp},
			CanonicalizedBody: body,
		}}
		mediaType = "application/vnd.dev.sigstore.bundle+json;version=0.1"
	}
	pb := &protobundle.Bundle{
		MediaType:            mediaType,
		VerificationMaterial: vm,
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	}
	return bundle.NewBundle(pb)
}

// rekorBundle is cosign's dev.sigstore.cosign/bundle annotation.
type rekorBundle struct {
	SignedEntryTimestamp []byte
	Payload              struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	}
}

// The public-good root, fetched once per process (and again after a day).
var publicGood struct {
	sync.Mutex
	tr *root.TrustedRoot
	at time.Time
}

// publicGoodRoot returns Sigstore's public-good trusted root from TUF,
// with the TUF metadata cached under the user cache directory; offline, a
// cached copy is used while its metadata is valid.
func publicGoodRoot(ctx context.Context) (*root.TrustedRoot, error) {
	publicGood.Lock()
	defer publicGood.Unlock()
	if publicGood.tr != nil && time.Since(publicGood.at) < 24*time.Hour {
		return publicGood.tr, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("public-good Sigstore root: no user cache directory for its TUF copy (%v): set trusted_root in [plugin.signature]", err)
	}
	tr, err := fetchRoot(tuf.DefaultOptions().WithContext(ctx).WithCachePath(filepath.Join(dir, "mcphost", "sigstore-tuf")))
	if err != nil {
		return nil, err
	}
	publicGood.tr, publicGood.at = tr, time.Now()
	return tr, nil
}

// fetchRoot updates the TUF copy under opts.CachePath and returns the
// trusted root it names; when the update fails, the cached copy serves
// while its metadata is valid.
func fetchRoot(opts *tuf.Options) (*root.TrustedRoot, error) {
	tr, err := root.FetchTrustedRootWithOptions(opts)
	if err == nil {
		return tr, nil
	}
	cached, cerr := root.FetchTrustedRootWithOptions(opts.WithForceCache())
	if cerr != nil {
		return nil, fmt.Errorf("public-good Sigstore root: TUF update failed (%v) and no cached copy is usable (%v): connect once to cache it, or set trusted_root in [plugin.signature]", err, cerr)
	}
	return cached, nil
}

// readLimited reads at most maxBundle bytes of r.
func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBundle+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBundle {
		return nil, fmt.Errorf("larger than %d KiB", maxBundle>>10)
	}
	return b, nil
}

// verified resolves the reference to a manifest digest (a pinned digest
// is used as it is) and verifies a signature of that digest.
func (o *OCI) verified(ctx context.Context) (name.Digest, *Signer, error) {
	ref, err := ParseSignedOCIRef(o.ref)
	if err != nil {
		return name.Digest{}, nil, &FetchError{From: o.ref, Err: err}
	}
	// The trust material first: a bad key or root fails without asking
	// the registry anything.
	vf, err := newVerifier(ctx, o.sig)
	if err != nil {
		return name.Digest{}, nil, &SignatureError{From: o.ref, Err: err}
	}
	opts := o.remoteOptions(ctx)
	desc, err := remote.Get(ref, opts...) // checks a pinned digest
	if err != nil {
		return name.Digest{}, nil, &FetchError{From: o.ref, Err: err}
	}
	d := ref.Context().Digest(desc.Digest.String())
	cands, err := ociCandidates(d, opts)
	if err != nil {
		return name.Digest{}, nil, &FetchError{From: o.ref, Err: err}
	}
	s, err := vf.check(cands, desc.Manifest)
	if len(cands) == 0 {
		err = fmt.Errorf("%w: %s has no Sigstore bundle among its referrers (API or referrers tag) and no legacy tag %s-%s.sig; sign it (cosign sign) or remove [plugin.signature]",
			ErrNoSignature, d.DigestStr(), "sha256", strings.TrimPrefix(d.DigestStr(), "sha256:"))
	}
	if err != nil {
		return name.Digest{}, nil, &SignatureError{From: o.ref, Err: err}
	}
	return d, s, nil
}

// The annotations of a legacy cosign signature layer.
const (
	annSignature   = "dev.cosignproject.cosign/signature"
	annCertificate = "dev.sigstore.cosign/certificate"
	annRekor       = "dev.sigstore.cosign/bundle"
)

// ociCandidates finds the signatures of the manifest d: Sigstore bundles
// attached as OCI 1.1 referrers (go-containerregistry falls back to the
// referrers tag schema where the registry lacks the API), then the
// legacy cosign tag sha256-<hex>.sig.
func ociCandidates(d name.Digest, opts []remote.Option) ([]candidate, error) {
	var out []candidate
	idx, err := remote.Referrers(d, opts...)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", d.DigestStr(), err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", d.DigestStr(), err)
	}
	for _, m := range im.Manifests {
		if m.ArtifactType != bundleMediaType {
			continue
		}
		from := "OCI referrer " + m.Digest.String()
		img, err := remote.Image(d.Context().Digest(m.Digest.String()), opts...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		layers, err := img.Layers()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		for _, l := range layers {
			b, err := layerBytes(l)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", from, err)
			}
			out = append(out, bundleCandidate(b, from))
		}
	}
	tag := d.Context().Tag(strings.Replace(d.DigestStr(), ":", "-", 1) + ".sig")
	img, err := remote.Image(tag, opts...)
	var terr *transport.Error
	switch {
	case errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound:
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("legacy signature %s: %w", tag, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("legacy signature %s: %w", tag, err)
	}
	for _, desc := range m.Layers {
		from := "legacy cosign tag " + tag.TagStr()
		l, err := img.LayerByDigest(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		payload, err := layerBytes(l)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		c := candidate{payload: payload, from: from}
		sig, err := base64.StdEncoding.DecodeString(desc.Annotations[annSignature])
		if err == nil {
			c.bundle, err = legacyBundle(sig, []byte(desc.Annotations[annCertificate]), []byte(desc.Annotations[annRekor]), payload)
		}
		c.err = err
		out = append(out, c)
	}
	return out, nil
}

// bundleCandidate parses a bundle; one that does not parse is a bad
// signature, reported if no other is good.
func bundleCandidate(b []byte, from string) candidate {
	bd, err := parseBundle(b)
	return candidate{bundle: bd, err: err, from: from}
}

// layerBytes reads a small layer (a bundle or a payload), checking its
// digest.
func layerBytes(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readLimited(rc)
}

// Verify fetches the plugin at from (an https URL of a .wasm, or an OCI
// reference, a tag being enough) into the download cache dir, verifies it
// against sig, and returns the cached file and its signer: what a
// [[plugin]] with that source and signature table would load. from may
// also be a local file (an existing one, or a path ending in .wasm or
// starting with ./, ../ or /): its bundle is the file sig.URL names, by
// default the file's name plus ".sigstore.json"; nothing is fetched but
// the public-good root.
func Verify(ctx context.Context, from string, sig *Signature, dir string, client *http.Client) (string, *Signer, error) {
	if isLocalFile(from) {
		return verifyFile(ctx, from, sig)
	}
	if strings.Contains(from, "://") {
		u := NewURL(from, "", dir, client, sig)
		file, err := u.Fetch(ctx)
		return file, u.Signer(), err
	}
	o := NewOCI(from, dir, client, sig)
	file, err := o.Fetch(ctx)
	return file, o.Signer(), err
}

// isLocalFile tells a file name from an OCI reference or a URL.
func isLocalFile(from string) bool {
	if strings.Contains(from, "://") {
		return false
	}
	if fi, err := os.Stat(from); err == nil && fi.Mode().IsRegular() {
		return true
	}
	return strings.HasSuffix(from, ".wasm") || filepath.IsAbs(from) ||
		strings.HasPrefix(from, "./") || strings.HasPrefix(from, "../")
}

// verifyFile verifies a local file against the bundle beside it (or the
// one sig.URL names).
func verifyFile(ctx context.Context, file string, sig *Signature) (string, *Signer, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", nil, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", nil, err
	}
	bundleFile := sig.URL
	if bundleFile == "" {
		bundleFile = file + ".sigstore.json"
	}
	b, _, err := opfile.Read(bundleFile, maxBundle)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, &SignatureError{From: file, Err: fmt.Errorf("%w: %s is not there (put the Sigstore bundle there, or name it with --bundle)", ErrNoSignature, bundleFile)}
	} else if err != nil {
		return "", nil, &SignatureError{From: file, Err: err}
	}
	vf, err := newVerifier(ctx, sig)
	if err != nil {
		return "", nil, &SignatureError{From: file, Err: err}
	}
	signer, err := vf.check([]candidate{bundleCandidate(b, "bundle "+bundleFile)}, data)
	if err != nil {
		return "", nil, &SignatureError{From: file, Err: err}
	}
	return abs, signer, nil
}
