package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/sandbox/limits"
)

func TestPrivateClass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want string // substring; "" for a public address
	}{
		{"127.0.0.1", "loopback"},
		{"127.1.2.3", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "RFC 1918"},
		{"172.16.5.4", "RFC 1918"},
		{"192.168.1.1", "RFC 1918"},
		{"fd12::1", "RFC 4193"},
		{"169.254.169.254", "cloud metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.255", "CGNAT"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"93.184.215.14", ""},
		{"100.128.0.1", ""},
		{"172.32.0.1", ""},
		{"2606:4700::1111", ""},
	}
	for _, tc := range tests {
		got := privateClass(netip.MustParseAddr(tc.addr))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q; want %q", tc.addr, got, tc.want)
		}
	}
}

// countingListener counts the TCP connections it accepts: a refused
// destination must never see one.
type countingListener struct {
	net.Listener
	accepts atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
	}
	return c, err
}

// serveOn starts an HTTP server on addr ("127.0.0.1:0" …) that answers
// "hello from NAME", and returns it with its listener.
func serveOn(t *testing.T, addr, name string, h http.Handler) (*httptest.Server, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from "+name) })
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = cl
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cl
}

func portOf(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestEgressGuest runs the test guest's "http" export (a raw Extism guest
// that asks for whatever URL it is given) against loopback servers, and
// counts what each server accepted.
func TestEgressGuest(t *testing.T) {
	t.Parallel()
	needGuest(t)
	allowed, allowedLn := serveOn(t, "127.0.0.1:0", "allowed", nil)
	forbidden, forbiddenLn := serveOn(t, "127.0.0.1:0", "forbidden", nil)
	aPort, fPort := portOf(t, allowed), portOf(t, forbidden)
	redirect, _ := serveOn(t, "127.0.0.1:0", "redirect", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	rPort := portOf(t, redirect)

	tests := []struct {
		name    string
		allowed []string
		private bool
		url     string
		want    string   // output, when allowed
		refused []string // substrings of the refusal, when refused
	}{
		{name: "IP literal rule", allowed: []string{"127.0.0.1"}, url: allowed.URL + "/x", want: "200 hello from allowed"},
		{name: "rule with the port", allowed: []string{"127.0.0.1:" + aPort}, url: allowed.URL, want: "200 hello from allowed"},
		{name: "port mismatch", allowed: []string{"127.0.0.1:" + aPort}, url: forbidden.URL,
			refused: []string{"port " + fPort + " is not allowed", `"127.0.0.1:` + aPort + `"`, "allowed_hosts in [[plugin]]"}},
		{name: "host not allowed", allowed: []string{"example.com"}, url: forbidden.URL,
			refused: []string{"host 127.0.0.1 is not allowed", "add it to allowed_hosts in [[plugin]]"}},
		{name: "no rules", url: forbidden.URL, refused: []string{"not allowed", "allowed_hosts"}},
		{name: "wildcard does not grant a loopback literal", allowed: []string{"*"}, url: forbidden.URL,
			refused: []string{"address 127.0.0.1 is loopback", "allow_private_networks = true in [[plugin]]"}},
		{name: "wildcard with allow_private_networks", allowed: []string{"*"}, private: true, url: allowed.URL, want: "200 hello from allowed"},
		{name: "localhost rule", allowed: []string{"localhost:" + aPort}, url: "http://localhost:" + aPort + "/", want: "200 hello from allowed"},
		{name: "redirect to a port not allowed", allowed: []string{"127.0.0.1:" + rPort},
			url:     redirect.URL + "/?to=" + forbidden.URL + "/secret",
			refused: []string{"port " + fPort + " is not allowed"}},
		{name: "redirect to a name not allowed", allowed: []string{"127.0.0.1"},
			url:     redirect.URL + "/?to=http://localhost:" + fPort + "/secret",
			refused: []string{"host localhost is not allowed"}},
		{name: "redirect allowed (control)", allowed: []string{"127.0.0.1:" + rPort, "localhost:" + aPort},
			url: redirect.URL + "/?to=http://localhost:" + aPort + "/", want: "200 hello from allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := forbiddenLn.accepts.Load()
			m := load(t, Limits{Instances: 1, AllowedHosts: tc.allowed, AllowPrivateNetworks: tc.private})
			out, err := m.Call(context.Background(), "http", []byte(tc.url))
			if tc.refused == nil {
				if err != nil || string(out) != tc.want {
					t.Fatalf("got %q, %v; want %q", out, err, tc.want)
				}
				return
			}
			ce := callErr(t, err)
			if ce.Kind != KindHostPanic {
				t.Errorf("got kind %v; want %v", ce.Kind, KindHostPanic)
			}
			for _, want := range append(tc.refused, fmt.Sprintf("plugin %q", t.Name())) {
				if !strings.Contains(ce.Detail, want) {
					t.Errorf("refusal %q; want it to contain %q", ce.Detail, want)
				}
			}
			var re *RefusedError
			if !errors.As(err, &re) || re.Plugin != t.Name() {
				t.Errorf("got %v; want a *RefusedError of plugin %q", err, t.Name())
			}
			if !testLogs.Contains("http request refused") || !testLogs.Contains("plugin="+t.Name()) {
				t.Errorf("no warning for plugin %s in the log", t.Name())
			}
			if n := forbiddenLn.accepts.Load() - before; n != 0 {
				t.Errorf("the forbidden server accepted %d connections; want 0", n)
			}
		})
	}
	if n := allowedLn.accepts.Load(); n == 0 {
		t.Errorf("the allowed server accepted nothing: the allowed cases proved nothing")
	}
}

// TestEgressRedirectsNeverConnect follows many redirects to a forbidden
// port and counts the forbidden listener's accepts, which must stay 0.
func TestEgressRedirectsNeverConnect(t *testing.T) {
	t.Parallel()
	needGuest(t)
	forbidden, forbiddenLn := serveOn(t, "127.0.0.1:0", "forbidden", nil)
	redirect, redirectLn := serveOn(t, "127.0.0.1:0", "redirect", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, forbidden.URL+"/secret", http.StatusFound)
	}))
	const n = 300
	m := load(t, Limits{Instances: 1, AllowedHosts: []string{"127.0.0.1:" + portOf(t, redirect)}})
	for i := range n {
		if out, err := m.Call(context.Background(), "http", []byte(redirect.URL)); err == nil {
			t.Fatalf("redirect %d: got %q; want a refusal", i, out)
		}
	}
	if a := forbiddenLn.accepts.Load(); a != 0 {
		t.Errorf("%d redirects: the forbidden server accepted %d connections; want 0", n, a)
	}
	if redirectLn.accepts.Load() == 0 {
		t.Errorf("the redirecting server accepted nothing")
	}
	t.Logf("%d redirects to a forbidden port: %d connections accepted by it", n, forbiddenLn.accepts.Load())
}

// loopbackName returns a name of this machine that resolves to a loopback
// address, and that address, or skips tb.
func loopbackName(tb testing.TB) (string, netip.Addr) {
	tb.Helper()
	host, err := os.Hostname()
	if err != nil {
		tb.Skipf("no host name to resolve: %v", err)
	}
	addrs, err := net.LookupHost(host)
	if err != nil {
		tb.Skipf("host name %q does not resolve (%v): the private-address guard needs a name that resolves to loopback", host, err)
	}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Unmap().IsLoopback() && ip.Unmap().Is4() {
			return strings.ToLower(host), ip.Unmap()
		}
	}
	tb.Skipf("host name %q resolves to %v, no IPv4 loopback address: the private-address guard needs a name that does (e.g. an /etc/hosts line)", host, addrs)
	return "", netip.Addr{}
}

// TestEgressPrivateName asks for a name allowed by allowed_hosts that
// resolves to loopback: refused without allow_private_networks, with no
// connection made, and served with it.
func TestEgressPrivateName(t *testing.T) {
	t.Parallel()
	needGuest(t)
	name, ip := loopbackName(t)
	srv, ln := serveOn(t, netip.AddrPortFrom(ip, 0).String(), "private", nil)
	url := "http://" + net.JoinHostPort(name, portOf(t, srv)) + "/"
	tests := []struct {
		name    string
		allowed []string
		private bool
		want    string
	}{
		{"name rule", []string{name}, false, ""},
		{"glob rule", []string{"*"}, false, ""},
		{"name rule with allow_private_networks", []string{name}, true, "200 hello from private"},
		{"IP literal rule does not grant the name", []string{ip.String()}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := ln.accepts.Load()
			m := load(t, Limits{Instances: 1, AllowedHosts: tc.allowed, AllowPrivateNetworks: tc.private})
			out, err := m.Call(context.Background(), "http", []byte(url))
			if tc.want != "" {
				if err != nil || string(out) != tc.want {
					t.Fatalf("got %q, %v; want %q", out, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %q; want a refusal", out)
			}
			if tc.allowed[0] != ip.String() {
				for _, want := range []string{name, "address " + ip.String() + " is loopback", "allow_private_networks = true in [[plugin]] " + t.Name()} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q; want it to contain %q", err, want)
					}
				}
			}
			if n := ln.accepts.Load() - before; n != 0 {
				t.Errorf("the server behind %s accepted %d connections; want 0", name, n)
			}
		})
	}
}

// TestEgressResolvesOnce checks, with a resolver the test controls, that a
// name is resolved once per connection and that every address is checked
// before any is dialled: a public answer followed by a loopback one
// (rebinding) is refused as a whole.
func TestEgressResolvesOnce(t *testing.T) {
	t.Parallel()
	srv, ln := serveOn(t, "127.0.0.1:0", "rebound", nil)
	port, _ := strconv.Atoi(portOf(t, srv))
	tests := []struct {
		name    string
		answer  []string
		private bool
		wantErr string
	}{
		{"public then loopback", []string{"93.184.215.14", "127.0.0.1"}, false, "address 127.0.0.1 is loopback"},
		{"metadata", []string{"169.254.169.254"}, false, "cloud metadata"},
		{"CGNAT", []string{"100.64.1.1"}, false, "CGNAT"},
		{"allowed private answer is dialled", []string{"127.0.0.1"}, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEgress("p", Limits{AllowedHosts: []string{"rebind.example"}, AllowPrivateNetworks: tc.private}, slog.New(slog.DiscardHandler))
			var lookups atomic.Int32
			e.lookup = func(_ context.Context, _, host string) ([]netip.Addr, error) {
				lookups.Add(1)
				var out []netip.Addr
				for _, a := range tc.answer {
					out = append(out, netip.MustParseAddr(a))
				}
				return out, nil
			}
			before := ln.accepts.Load()
			c, err := e.dial(context.Background(), "tcp", net.JoinHostPort("rebind.example", strconv.Itoa(port)))
			if lookups.Load() != 1 {
				t.Errorf("resolved %d times; want once", lookups.Load())
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatalf("dialled; want a refusal containing %q", tc.wantErr)
			}
			var re *RefusedError
			if !errors.As(err, &re) || re.Key != "allow_private_networks" || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %v; want a refusal naming allow_private_networks and %q", err, tc.wantErr)
			}
			if n := ln.accepts.Load() - before; n != 0 {
				t.Errorf("accepted %d connections; want 0", n)
			}
		})
	}
}

// FuzzParseHostRule: any allowed_hosts text either fails to parse or gives
// a rule that allows its own host on its own port (or every port), so an
// accepted rule is never one that can never match.
func FuzzParseHostRule(f *testing.F) {
	for _, s := range []string{"api.example.com", "x.com:8443", "*", "*.example.org", "[::1]:80", "::1", "10.0.0.1:1", "https://x", "a:b:c", "[", "Ä.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := limits.ParseHostRule(s)
		if err != nil {
			return
		}
		host := strings.ReplaceAll(r.Host, "*", "a")
		ip, _ := netip.ParseAddr(host)
		if !r.MatchHost(host, ip) {
			t.Fatalf("rule %q (host %q) does not match its own host", s, r.Host)
		}
		port := r.Port
		if port == 0 {
			port = 443
		}
		e := &egress{plugin: "p", rules: []limits.HostRule{r}}
		_, err = e.allow(context.Background(), host, ip, port)
		var re *RefusedError
		if errors.As(err, &re) && re.Key == "allowed_hosts" {
			t.Fatalf("rule %q refuses its own host %s:%d: %v", s, host, port, err)
		}
		if err != nil {
			t.Fatalf("rule %q: %v", s, err)
		}
	})
}

// fakeConsent answers every reach with err and records what it was asked
// and whether the call's Peer reached it.
type fakeConsent struct {
	err     error
	mu      sync.Mutex
	asked   []string
	withPer int
}

func (c *fakeConsent) Allow(ctx context.Context, r Reach) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, r.Plugin+" "+r.Target())
	if PeerFrom(ctx) != nil {
		c.withPer++
	}
	return c.err
}

// nopPeer is a Peer that answers nothing; it only marks the call's ctx.
type nopPeer struct{}

func (nopPeer) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, ErrNoPeer
}
func (nopPeer) Notify(context.Context, string, json.RawMessage) error { return nil }

// TestEgressConsent: a destination outside allowed_hosts goes to Consent
// only when may_request_hosts names it, with the call's ctx; what Consent
// allows connects, without joining the pool (the next call asks again);
// what it refuses never connects.
func TestEgressConsent(t *testing.T) {
	t.Parallel()
	needGuest(t)
	srv, ln := serveOn(t, "127.0.0.1:0", "asked", nil)
	port := portOf(t, srv)
	tests := []struct {
		name     string
		may      []string
		none     bool // no Consent: nothing can ask
		answer   error
		calls    int
		wantAsk  int
		accepts  int32
		refusals []string // substrings of the refusal; nil: served
	}{
		{name: "approved", may: []string{"127.0.0.1"}, calls: 2, wantAsk: 2, accepts: 2},
		{name: "approved port rule", may: []string{"127.0.0.1:" + port}, calls: 1, wantAsk: 1, accepts: 1},
		{name: "declined", may: []string{"127.0.0.1"}, answer: errors.New("a person said no"), calls: 1, wantAsk: 1,
			refusals: []string{"a person said no"}},
		{name: "not declared", may: []string{"example.com"}, calls: 1,
			refusals: []string{"add it to allowed_hosts", "may_request_hosts does not name it"}},
		{name: "other port declared", may: []string{"127.0.0.1:1"}, calls: 1,
			refusals: []string{"add it to allowed_hosts", "may_request_hosts does not name it"}},
		{name: "declared, but no one to ask", may: []string{"127.0.0.1"}, none: true, calls: 1,
			refusals: []string{"may_request_hosts names it, but no person can be asked here", `add "127.0.0.1:` + port + `" to allowed_hosts`}},
		{name: "wildcard does not ask for a loopback literal", may: []string{"*"}, calls: 1,
			refusals: []string{"address 127.0.0.1 is loopback", "allow_private_networks = true"}},
	}
	var mu sync.Mutex // the cases share the server's accept count
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			c := &fakeConsent{err: tc.answer}
			lim := Limits{Instances: 1, MayRequestHosts: tc.may, Consent: c}
			if tc.none {
				lim.Consent = nil
			}
			m := load(t, lim)
			before := ln.accepts.Load()
			for range tc.calls {
				out, err := m.Call(WithPeer(context.Background(), nopPeer{}), "http", []byte(srv.URL+"/x"))
				if tc.refusals == nil {
					if err != nil || string(out) != "200 hello from asked" {
						t.Fatalf("got %q, %v; want the server's answer", out, err)
					}
					continue
				}
				var re *RefusedError
				if !errors.As(err, &re) {
					t.Fatalf("got %q, %v; want a *RefusedError", out, err)
				}
				if re.Asked != (tc.wantAsk > 0) {
					t.Errorf("Asked = %v; want %v", re.Asked, tc.wantAsk > 0)
				}
				for _, want := range tc.refusals {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q; want it to contain %q", err, want)
					}
				}
			}
			if len(c.asked) != tc.wantAsk || c.withPer != tc.wantAsk {
				t.Errorf("asked %v (%d with the call's peer); want %d asks, each with it", c.asked, c.withPer, tc.wantAsk)
			}
			for _, a := range c.asked {
				if want := t.Name() + " 127.0.0.1:" + port; a != want {
					t.Errorf("asked about %q; want %q", a, want)
				}
			}
			if got := ln.accepts.Load() - before; got != tc.accepts {
				t.Errorf("the server accepted %d connections; want %d", got, tc.accepts)
			}
		})
	}
}
