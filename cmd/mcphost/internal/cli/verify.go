package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"github.com/mcphost/mcphost/plugins/source"
)

const verifyMore = `SOURCE is an OCI reference (registry/repository:tag, or …@sha256:<hex>),
an https URL of a .wasm, or a local .wasm file. verify finds its Sigstore
signature (OCI referrers, the referrers tag, a legacy sha256-<hex>.sig tag,
<url>.sigstore.json, or for a file FILE.sigstore.json beside it or --bundle)
and checks it as a [plugin.signature] table would, without serving it.
`

func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", stdout, stderr)
	fs.more = verifyMore
	var sig source.Signature
	fs.StringVar(&sig.Identity, "identity", "", "the exact certificate subject (SAN) of a keyless signer")
	fs.StringVar(&sig.Issuer, "issuer", "", "the exact OIDC issuer of a keyless signer")
	fs.StringVar(&sig.Key, "key", "", "a PEM public key file (ECDSA P-256 or Ed25519) instead of --identity and --issuer")
	fs.StringVar(&sig.TrustedRoot, "trusted-root", "", "a trusted_root.json of a private Sigstore (default: the public-good root, through TUF)")
	fs.StringVar(&sig.URL, "signature-url", "", "where a URL's bundle is (default: SOURCE.sigstore.json)")
	fs.StringVar(&sig.URL, "bundle", "", "a local SOURCE's bundle file (default: SOURCE.sigstore.json)")
	asJSON := fs.Bool("json", false, "print the verified signer as JSON")
	operands, err := fs.parseOperands(args)
	if err != nil {
		return err
	}
	var bad string
	switch {
	case len(operands) != 1:
		bad = fmt.Sprintf("want one SOURCE, got %d arguments", len(operands))
	case sig.Key != "" && (sig.Identity != "" || sig.Issuer != ""):
		bad = "set either --key, or --identity and --issuer"
	case sig.Key == "" && (sig.Identity == "" || sig.Issuer == ""):
		bad = "say whose signature to accept: --identity and --issuer (both, exact), or --key"
	}
	if bad != "" {
		fmt.Fprintf(stderr, "mcphost verify: %s\n\n", bad)
		fs.Usage()
		return errUsage
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	file, signer, err := source.Verify(ctx, operands[0], &sig, filepath.Join(cacheRoot(), "download"), client)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(signer)
	}
	fmt.Fprintf(stdout, "ok: %s\n  signed by %s\n  digest    %s\n  found     %s\n  file      %s\n", operands[0], signer, signer.Digest, signer.From, file)
	return nil
}
