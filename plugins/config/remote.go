package config

// remoteSource reads a [[plugin]] table's url or oci key into spec and
// returns the key that was set ("" for neither). sha256 is required with
// url; oci carries its own pin, the manifest digest. With a signature
// table, the signature is the pin: neither is required.
func (p *configParser) remoteSource(s section, m map[string]any, spec *Spec) string {
	_, hasURL := m["url"]
	_, hasOCI := m["oci"]
	_, signed := m["signature"]
	switch {
	case hasURL && hasOCI:
		s.errf("oci", "set either url or oci, not both")
		return "oci"
	case hasURL:
		if v, ok := s.str(m, "url"); ok {
			if err := check(p.ck.URL, v); err != nil {
				s.errf("url", "%v", err)
			}
			spec.URL = v
		}
		if _, ok := m["sha256"]; !ok && !signed {
			s.errf("url", "a url needs a sha256 pin (sha256 = \"<64 hex digits>\") or a [plugin.signature] table")
		}
		return "url"
	case hasOCI:
		if v, ok := s.str(m, "oci"); ok {
			if p.ck.OCI != nil {
				if err := p.ck.OCI(v, signed); err != nil {
					s.errf("oci", "%v", err)
				}
			}
			spec.OCI = v
		}
		return "oci"
	}
	return ""
}
