package limits

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
)

// HostRule is one parsed allowed_hosts entry.
type HostRule struct {
	Text string     // as written, for messages
	Host string     // lower case: a name, "*", "*.domain" or an IP literal
	IP   netip.Addr // set when Host is an IP literal
	Port uint16     // 0: every port
	glob glob.Glob  // set when Host holds '*'
}

// CheckAllowedHost returns why rule, an allowed_hosts entry, can never
// match a request, or nil. A rule is a host name, "*", "*.domain", an IPv4
// literal, or an IPv6 literal (in brackets when a port follows),
// optionally followed by ":port".
func CheckAllowedHost(rule string) error {
	_, err := ParseHostRule(rule)
	return err
}

// ParseHostRule parses s, an allowed_hosts entry; the error says why
// it can never match a request.
func ParseHostRule(s string) (HostRule, error) {
	r := HostRule{Text: s}
	switch {
	case s == "":
		return r, errors.New("empty host")
	case strings.Contains(s, "://"):
		return r, errors.New("want a host name, not a URL (leave out the scheme and path)")
	case strings.ContainsAny(s, "/?#"):
		return r, errors.New("want a host name, not a path (rules match hosts and ports only)")
	case strings.Contains(s, "@"):
		return r, errors.New("want a host name, without credentials")
	case strings.ContainsAny(s, " \t\r\n"):
		return r, errors.New("want a host name, without spaces")
	}
	host, port := s, ""
	if a, err := netip.ParseAddr(s); err == nil && a.Is6() {
		if a.Zone() != "" {
			// A dialled address carries no zone, so such a rule would
			// never match: refused, as it is in brackets.
			return r, fmt.Errorf("%q names an IPv6 zone; write the address without its %%zone", s)
		}
		host = s // a bare IPv6 literal: every port
	} else if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return r, errors.New("'[' without ']' (write an IPv6 address as [::1] or [::1]:8080)")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return r, fmt.Errorf("%q after ']': want nothing or \":port\"", port)
		}
		port = strings.TrimPrefix(port, ":")
		if port == "" && strings.HasSuffix(s, ":") {
			return r, errors.New("empty port after ':'")
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() || a.Zone() != "" {
			return r, fmt.Errorf("%q in brackets is not an IPv6 address", host)
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		if strings.Count(s, ":") > 1 {
			return r, errors.New("more than one ':' (write an IPv6 address in brackets: [::1]:8080)")
		}
		host, port = s[:i], s[i+1:]
		if port == "" {
			return r, errors.New("empty port after ':'")
		}
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || port[0] == '+' {
			return r, fmt.Errorf("port %q: want a number from 1 to 65535", port)
		}
		r.Port = uint16(n)
	}
	if host == "" {
		return r, errors.New("empty host before the port")
	}
	r.Host = strings.ToLower(host)
	if a, err := netip.ParseAddr(r.Host); err == nil {
		r.IP = a.Unmap()
		return r, nil
	}
	for _, c := range r.Host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '*') {
			return r, fmt.Errorf("%q cannot appear in a host name", c)
		}
	}
	if strings.Contains(r.Host, "*") {
		if r.Host != "*" && strings.Contains(strings.TrimPrefix(r.Host, "*."), "*") {
			return r, errors.New(`'*' may only appear alone or as a leading "*."`)
		}
		g, err := glob.Compile(r.Host)
		if err != nil {
			return r, err
		}
		r.glob = g
	}
	return r, nil
}

// MatchHost reports whether the rule names host (lower case, an IP
// literal without brackets), whatever the port.
func (r *HostRule) MatchHost(host string, ip netip.Addr) bool {
	switch {
	case r.glob != nil:
		return r.glob.Match(host)
	case r.IP.IsValid():
		return ip.IsValid() && ip.Unmap() == r.IP
	}
	return r.Host == host
}

// TrustsPrivate says the rule itself names a private destination: an IP
// literal, or localhost. Any other rule reaches only public addresses
// unless allow_private_networks is set.
func (r *HostRule) TrustsPrivate() bool { return r.IP.IsValid() || r.Host == "localhost" }
