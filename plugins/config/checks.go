package config

// Checks are the checks of values whose form a package config does not
// import owns: plugins/source (url and oci references, signature key and
// trusted_root files) and plugins/store (the [server] store URL). Those
// packages link Sigstore, go-containerregistry and go-redis, which a
// parser of plain data has no need of; the importer that loads plugins
// passes their checks in (plugins.LoadConfig), so that a bad value is
// reported at parse time with its file, line and key.
//
// A nil check leaves its value to the package that uses it: source
// refuses a bad reference when it fetches, store a bad URL when it opens.
// config's own checks (a redis:// or rediss:// scheme, a url's sha256 pin,
// the shape of a [plugin.signature] table, …) run whatever Checks hold.
type Checks struct {
	// URL checks a url or signature_url (want an https URL).
	URL func(url string) error
	// OCI checks an oci reference; signed says a [plugin.signature]
	// table verifies it, so a tag without a digest may do.
	OCI func(ref string, signed bool) error
	// SignatureKey and TrustedRoot read the key and trusted_root files a
	// [plugin.signature] table names (absolute paths).
	SignatureKey func(file string) error
	TrustedRoot  func(file string) error
	// Store checks the [server] store URL (redis:// or rediss://).
	Store func(url string) error
}

// check runs fn on v, or reports nothing when the check is not set.
func check(fn func(string) error, v string) error {
	if fn == nil {
		return nil
	}
	return fn(v)
}
