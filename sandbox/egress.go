package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/sandbox/internal/rootfs"
	"github.com/mcphost/mcphost/sandbox/limits"
)

// Outbound HTTP (http_request) is allowed by Limits.AllowedHosts and
// Limits.AllowPrivateNetworks, and checked in one place: the dialer of the
// module's http.Client. Every TCP connection the client opens, for the
// first request and for each redirect hop, goes through egress.dial, which
// matches the host and port against the rules, resolves a name once,
// checks every address and dials only checked addresses. Nothing is
// checked earlier, so nothing can pass that check and then connect
// somewhere else.

// parseHostRules parses every rule; the first bad one is the error.
func parseHostRules(rules []string) ([]limits.HostRule, error) {
	out := make([]limits.HostRule, 0, len(rules))
	for _, s := range rules {
		r, err := limits.ParseHostRule(s)
		if err != nil {
			return nil, fmt.Errorf("allowed hosts: %q: %w", s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// privateClass names why a is not a public address, or returns "" when it
// is one.
func privateClass(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified(), a.Is4() && a.As4()[0] == 0:
		return "unspecified"
	case a.IsPrivate():
		if a.Is4() {
			return "private (RFC 1918)"
		}
		return "private (RFC 4193)"
	case a.IsLinkLocalUnicast():
		if a == netip.AddrFrom4([4]byte{169, 254, 169, 254}) {
			return "link-local (cloud metadata)"
		}
		return "link-local"
	case cgnat.Contains(a):
		return "shared (CGNAT, RFC 6598)"
	case a.IsMulticast():
		return "multicast"
	}
	return ""
}

// RefusedError is the error of an outbound connection the rules do not
// allow. The guest sees its text; Key is the plugins.toml key that would
// allow it.
type RefusedError struct {
	Plugin string
	Host   string // as the request named it
	Port   uint16
	Addr   netip.Addr // the resolved address refused, when the name was allowed
	Key    string     // "allowed_hosts" or "allow_private_networks"
	// Asked says the refusal is Consent's (may_request_hosts named the
	// destination): a person declined, or could not be asked.
	Asked  bool
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("plugin %q: http to %s: %s", e.Plugin, net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), e.Reason)
}

// egress is one module's outbound-HTTP policy and dialer.
type egress struct {
	plugin       string
	rules        []limits.HostRule
	mayRequest   []limits.HostRule // what consent may allow beyond rules
	consent      Consent           // nil: nothing beyond rules
	allowPrivate bool
	dialer       net.Dialer
	warn         *rootfs.Warner
	// lookup resolves a name (net.DefaultResolver.LookupNetIP in
	// production).
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

func newEgress(plugin string, lim Limits, log *slog.Logger) *egress {
	// normalize has parsed the rules already; a bad one cannot get here.
	rules, _ := parseHostRules(lim.AllowedHosts)
	may, _ := parseHostRules(lim.MayRequestHosts)
	if len(rules) > 0 || len(may) > 0 {
		warnProxyOnce(log)
	}
	return &egress{
		plugin:       plugin,
		rules:        rules,
		mayRequest:   may,
		consent:      lim.Consent,
		allowPrivate: lim.AllowPrivateNetworks,
		dialer:       net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		warn:         rootfs.NewWarner(log, "", 0, 0),
		lookup:       net.DefaultResolver.LookupNetIP,
	}
}

// client returns the module's own http.Client: every connection goes
// through e.dial, it follows at most 10 redirects, and it ignores the
// process's proxy settings (a proxy would be the address dialled, and the
// rules could not be checked against the destination).
func (e *egress) client() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = e.dial
	var rt http.RoundTripper = t
	if e.consent != nil && len(e.mayRequest) > 0 {
		rt = consentTransport{e, t}
	}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

var proxyWarned sync.Once

// warnProxyOnce says, once per process, that plugins do not use a proxy
// set in the environment.
func warnProxyOnce(log *slog.Logger) {
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		if os.Getenv(k) != "" {
			proxyWarned.Do(func() {
				log.Warn("plugin http requests ignore the proxy environment: allowed_hosts is checked on the address dialled, which a proxy would hide", "env", k)
			})
			return
		}
	}
}

// dial opens the connection to addr ("host:port", as the transport
// computed it from the request's URL) if the rules allow it.
func (e *egress) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port64, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portText, err)
	}
	port := uint16(port64)
	host = strings.ToLower(host)
	lit, _ := netip.ParseAddr(host)
	trusted, err := e.allow(ctx, host, lit, port)
	if err != nil {
		return nil, err
	}

	var addrs []netip.Addr
	if lit.IsValid() {
		addrs = []netip.Addr{lit}
	} else {
		// Resolved once: the addresses checked are the ones dialled, so
		// a second answer (DNS rebinding) cannot change the destination.
		addrs, err = e.lookup(ctx, ipNetwork(network), host)
		if err != nil {
			return nil, err
		}
	}
	if !trusted && !e.allowPrivate {
		for _, a := range addrs {
			if class := privateClass(a); class != "" {
				return nil, e.refusePrivate(host, port, a, class)
			}
		}
	}
	var errs []error
	for _, a := range addrs {
		c, err := e.dialer.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), port).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	return nil, errors.Join(errs...)
}

// allow matches host (lower case; lit is its address when it is an IP
// literal) and port against the rules, and asks Consent about what they
// refuse and may_request_hosts names. trusted says what allows it also
// names a private destination itself (an IP literal or localhost).
func (e *egress) allow(ctx context.Context, host string, lit netip.Addr, port uint16) (trusted bool, err error) {
	trusted, allowed, hostMatch, portRules := matchRules(e.rules, host, lit, port)
	if allowed {
		return trusted, nil
	}
	mayTrusted, may, _, _ := matchRules(e.mayRequest, host, lit, port)
	if may && e.consent == nil {
		target := net.JoinHostPort(host, strconv.Itoa(int(port)))
		return false, e.refuse(&RefusedError{Host: host, Port: port, Key: "allowed_hosts",
			Reason: fmt.Sprintf("host %s is not in allowed_hosts; may_request_hosts names it, but no person can be asked here (mcphost serve asks a client that declares elicitation); add %q to allowed_hosts in [[plugin]] %s", target, target, e.plugin)})
	}
	if may {
		// A private address is allowed as allowed_hosts would allow
		// it: only through a rule naming it (an IP literal or
		// localhost) or allow_private_networks. An IP literal that
		// would be refused anyway is refused before anyone is asked.
		if lit.IsValid() && !mayTrusted && !e.allowPrivate {
			if class := privateClass(lit); class != "" {
				return false, e.refusePrivate(host, port, lit, class)
			}
		}
		// The transport dials on a context that keeps the request's
		// values but not its deadline: the question is bounded by
		// the request's own context (the call's), so it is withdrawn
		// when the call ends.
		if rc, ok := ctx.Value(requestCtxKey{}).(context.Context); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(rc, cancel)()
		}
		if err := e.consent.Allow(ctx, Reach{Plugin: e.plugin, Host: host, Port: port}); err != nil {
			return false, e.refuse(&RefusedError{Host: host, Port: port, Key: "allowed_hosts", Asked: true, Reason: err.Error()})
		}
		return mayTrusted, nil
	}
	var also string
	if len(e.mayRequest) > 0 {
		also = " (may_request_hosts does not name it, so no one was asked)"
	}
	if !hostMatch {
		return false, e.refuse(&RefusedError{Host: host, Port: port, Key: "allowed_hosts",
			Reason: fmt.Sprintf("host %s is not allowed; add it to allowed_hosts in [[plugin]] %s%s", host, e.plugin, also)})
	}
	return false, e.refuse(&RefusedError{Host: host, Port: port, Key: "allowed_hosts",
		Reason: fmt.Sprintf("port %d is not allowed (allowed_hosts has %s); add %q to allowed_hosts in [[plugin]] %s%s",
			port, strings.Join(quoteAll(portRules), ", "), net.JoinHostPort(host, strconv.Itoa(int(port))), e.plugin, also)})
}

// matchRules matches host and port against rules: allowed says a rule
// names both (trusted: one of those also names a private destination
// itself), hostMatch that a rule names the host, portRules the rules that
// name it with another port.
func matchRules(rules []limits.HostRule, host string, lit netip.Addr, port uint16) (trusted, allowed, hostMatch bool, portRules []string) {
	for i := range rules {
		r := &rules[i]
		if !r.MatchHost(host, lit) {
			continue
		}
		hostMatch = true
		if r.Port != 0 && r.Port != port {
			portRules = append(portRules, r.Text)
			continue
		}
		allowed = true
		trusted = trusted || r.TrustsPrivate()
	}
	return trusted, allowed, hostMatch, portRules
}

// consentTransport keeps connections that only a person's approval
// allowed out of the pool: a request whose destination the rules do not
// allow closes its connection when it is done, so no later call (which
// was not approved, or whose grant was revoked) reuses it without the
// dialer asking again.
type consentTransport struct {
	e  *egress
	rt *http.Transport
}

// requestCtxKey carries a request's own context to its dial (see allow).
type requestCtxKey struct{}

func (t consentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.e.ruled(req.URL) {
		req = req.Clone(context.WithValue(req.Context(), requestCtxKey{}, req.Context()))
		req.Close = true
	}
	return t.rt.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport.
func (t consentTransport) CloseIdleConnections() { t.rt.CloseIdleConnections() }

// ruled reports whether the rules alone allow u's host and port (the
// scheme's default port when u has none), as the transport will dial it.
func (e *egress) ruled(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	p := u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return false
	}
	lit, _ := netip.ParseAddr(host)
	_, allowed, _, _ := matchRules(e.rules, host, lit, uint16(port))
	return allowed
}

// refusePrivate refuses a connection to a, a private address of class.
func (e *egress) refusePrivate(host string, port uint16, a netip.Addr, class string) error {
	return e.refuse(&RefusedError{Host: host, Port: port, Addr: a.Unmap(), Key: "allow_private_networks",
		Reason: fmt.Sprintf("address %s is %s; set allow_private_networks = true in [[plugin]] %s", a.Unmap(), class, e.plugin)})
}

// refuse fills in the plugin, logs the refusal (rate-limited) and returns
// it for the guest.
func (e *egress) refuse(err *RefusedError) error {
	err.Plugin = e.plugin
	attrs := []slog.Attr{slog.String("host", err.Host), slog.Int("port", int(err.Port)), slog.String("key", err.Key)}
	if err.Addr.IsValid() {
		attrs = append(attrs, slog.String("addr", err.Addr.String()))
	}
	e.warn.Log("http request refused", append(attrs, slog.String("reason", err.Reason))...)
	return err
}

func ipNetwork(network string) string {
	switch network {
	case "tcp4":
		return "ip4"
	case "tcp6":
		return "ip6"
	}
	return "ip"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
