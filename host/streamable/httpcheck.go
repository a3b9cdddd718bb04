package streamable

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// checker holds the HTTP transports' admission rules: the Host and Origin
// allow-lists (DNS-rebinding protection) and the optional bearer token.
type checker struct {
	anyHost, anyOrigin bool
	hosts              map[string]bool // "name" (any port) or "name:port", lowercase
	origins            map[string]bool // "scheme://host[:port]", lowercase
	token              *[sha256.Size]byte
}

func newChecker(opts Options) checker {
	c := checker{hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range opts.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			c.anyHost = true
		} else if h != "" {
			c.hosts[h] = true
		}
	}
	for _, o := range opts.AllowedOrigins {
		o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
		if o == "*" {
			c.anyOrigin = true
		} else if o != "" {
			c.origins[o] = true
		}
	}
	if opts.AuthToken != "" {
		sum := sha256.Sum256([]byte(opts.AuthToken))
		c.token = &sum
	}
	return c
}

var (
	errBadHost   = errors.New("invalid Host header")
	errBadOrigin = errors.New("invalid Origin header")
)

// host accepts a Host header naming a loopback address (any port) or an
// allowed host. A DNS-rebinding page reaches a local server under its own
// name, so its requests carry that name and fail here.
func (c *checker) host(r *http.Request) error {
	if c.anyHost {
		return nil
	}
	if c.hostAllowed(r.Host) {
		return nil
	}
	return errBadHost
}

func (c *checker) hostAllowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	name := hostName(hostport)
	if name == "" {
		return false
	}
	return isLoopbackName(name) || c.hosts[name] || c.hosts[hostport]
}

// origin accepts an Origin on a loopback host (http or https, any port),
// the request's own host (same origin; that host passed the Host check),
// or an allowed origin. "null" (sandboxed frames, file: pages) is refused.
func (c *checker) origin(origin, reqHost string) error {
	if c.anyOrigin {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Path != "" && u.Path != "/" {
		return errBadOrigin
	}
	host := strings.ToLower(u.Host)
	name := hostName(host)
	switch {
	case name == "":
		return errBadOrigin
	case isLoopbackName(name), host == strings.ToLower(reqHost), c.origins[strings.ToLower(u.Scheme)+"://"+host]:
		return nil
	}
	return errBadOrigin
}

// authorized reports whether r carries the bearer token (always, when
// none is configured). Both sides are hashed first, so the comparison
// takes the same time whatever the length of the guess.
func (c *checker) authorized(r *http.Request) bool {
	if c.token == nil {
		return true
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], c.token[:]) == 1
}

// hostName returns the host of "host", "host:port", "[v6]" or
// "[v6]:port", without brackets, or "" when hostport is malformed.
func hostName(hostport string) string {
	if hostport == "" {
		return ""
	}
	if name, _, err := net.SplitHostPort(hostport); err == nil {
		return name
	}
	if strings.HasPrefix(hostport, "[") {
		if !strings.HasSuffix(hostport, "]") {
			return ""
		}
		return hostport[1 : len(hostport)-1]
	}
	if strings.ContainsAny(hostport, ":[]/ @") {
		return ""
	}
	return hostport
}

func isLoopbackName(name string) bool {
	return name == "localhost" || name == "127.0.0.1" || name == "::1"
}

// accepts reports whether the Accept header values admit mediaType
// ("type/subtype"), directly or through a wildcard, with a q above 0.
// A part without parameters (as clients send them) is judged without
// mime.ParseMediaType, which builds a map for every part of every POST;
// the verdict is the one ParseMediaType leads to.
func accepts(values []string, mediaType string) bool {
	typ, _, _ := strings.Cut(mediaType, "/")
	for _, v := range values {
		for rest, more := v, true; more; {
			var part string
			part, rest, more = strings.Cut(rest, ",")
			part = strings.TrimSpace(part)
			if !strings.Contains(part, ";") {
				if bareMatch(part, mediaType, typ) {
					return true
				}
				continue
			}
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok && strings.Trim(q, "0.") == "" {
				continue // q=0: explicitly not acceptable
			}
			if mt == mediaType || mt == typ+"/*" || mt == "*/*" {
				return true
			}
		}
	}
	return false
}

// bareMatch reports whether part, an Accept element without parameters,
// is mediaType, typ/* or */*, as ParseMediaType would read it.
func bareMatch(part, mediaType, typ string) bool {
	return part == "*/*" || asciiEqualFold(part, mediaType) ||
		len(part) == len(typ)+2 && asciiEqualFold(part[:len(typ)], typ) && part[len(typ):] == "/*"
}

// asciiEqualFold is strings.EqualFold for an ASCII s: ParseMediaType reads
// a media type as its lowercase, and refuses non-ASCII, which EqualFold
// would fold ('ſ' is 's' to it).
func asciiEqualFold(s, lower string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return strings.EqualFold(s, lower)
}

// isJSONContentType reports whether a Content-Type is application/json
// (parameters such as charset allowed).
func isJSONContentType(ct string) bool {
	if asciiEqualFold(ct, "application/json") {
		return true // what ParseMediaType says, without its map
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}
