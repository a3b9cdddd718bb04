package config

var signatureKeys = []string{"identity", "issuer", "key", "trusted_root"}

// signature reads the [plugin.signature] table and signature_url of a
// [[plugin]] whose source key is remote ("url", "oci" or ""). It accepts
// either a key, or an identity and an issuer together: there is no
// match-all default. The key and trusted_root files are read here,
// through the Checks source gives (Checks.SignatureKey, TrustedRoot), so
// that a bad one is reported with its line.
func (p *configParser) signature(s section, m map[string]any, remote string) *Signature {
	sigURL, hasSigURL := s.str(m, "signature_url")
	v, ok := m["signature"]
	if !ok {
		if hasSigURL {
			s.errf("signature_url", "only used with a [plugin.signature] table, which is not set")
		}
		return nil
	}
	t, isTable := v.(map[string]any)
	if !isTable {
		s.errf("signature", "want a table ([plugin.signature] with identity and issuer, or key), got %s", tomlType(v))
		return nil
	}
	s.unknownSub("signature", t, signatureKeys, "want identity and issuer, or key; and optionally trusted_root")
	sig := &Signature{}
	str := func(k string) string {
		v, ok := t[k]
		if !ok {
			return ""
		}
		str, isStr := v.(string)
		switch {
		case !isStr:
			s.errf("signature."+k, "want a string, got %s", tomlType(v))
		case str == "":
			s.errf("signature."+k, "must not be empty (leave it out instead)")
		}
		return str
	}
	sig.Identity, sig.Issuer = str("identity"), str("issuer")
	if k := str("key"); k != "" {
		sig.Key = p.abs(k)
	}
	if r := str("trusted_root"); r != "" {
		sig.TrustedRoot = p.abs(r)
	}
	good := true
	switch {
	case sig.Key != "" && (sig.Identity != "" || sig.Issuer != ""):
		s.errf("signature.key", "set either key, or identity and issuer, not both")
		good = false
	case sig.Key != "" && sig.TrustedRoot != "":
		s.errf("signature.trusted_root", "a key-signed bundle is checked against the key alone; trusted_root is for identity and issuer")
		good = false
	case sig.Key == "" && sig.Identity == "" && sig.Issuer == "":
		s.errf("signature", "say whose signature to accept: identity and issuer (keyless, exact), or key (a public key file)")
		good = false
	case sig.Key == "" && sig.Identity == "":
		s.errf("signature", "missing identity: the exact certificate subject (SAN) of the signer, e.g. the workflow URL")
		good = false
	case sig.Key == "" && sig.Issuer == "":
		s.errf("signature", "missing issuer: the exact OIDC issuer, e.g. \"https://token.actions.githubusercontent.com\"")
		good = false
	}
	if sig.Key != "" {
		if err := check(p.ck.SignatureKey, sig.Key); err != nil {
			s.errf("signature.key", "%v", err)
			good = false
		}
	}
	if sig.TrustedRoot != "" {
		if err := check(p.ck.TrustedRoot, sig.TrustedRoot); err != nil {
			s.errf("signature.trusted_root", "%v", err)
			good = false
		}
	}
	if remote == "" {
		s.errf("signature", "a signature is checked on url and oci sources only; pin a local file with sha256 instead")
		good = false
	}
	if hasSigURL {
		if remote != "url" {
			s.errf("signature_url", "only used with url")
		} else if err := check(p.ck.URL, sigURL); err != nil {
			s.errf("signature_url", "%v", err)
		}
		sig.URL = sigURL
	}
	if !good {
		return nil
	}
	return sig
}
