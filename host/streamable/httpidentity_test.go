package streamable

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/plugins/store"
)

// TestHTTPClientAddr: X-Forwarded-For names the client only when the
// peer is a trusted proxy, read from the right past trusted hops.
func TestHTTPClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	tests := []struct {
		name    string
		proxies []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"no header", trusted, "127.0.0.1:5000", nil, "127.0.0.1"},
		{"untrusted peer", trusted, "192.0.2.9:5000", []string{"198.51.100.1"}, "192.0.2.9"},
		{"no trusted proxies", nil, "127.0.0.1:5000", []string{"198.51.100.1"}, "127.0.0.1"},
		{"trusted peer", trusted, "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed left of the proxy's entry", trusted, "127.0.0.1:5000", []string{"203.0.113.66, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", trusted, "127.0.0.1:5000", []string{"198.51.100.1, 10.1.1.1", "10.2.2.2"}, "198.51.100.1"},
		{"all trusted", trusted, "127.0.0.1:5000", []string{"10.1.1.1"}, "10.1.1.1"},
		{"garbage stops at the last trusted hop", trusted, "127.0.0.1:5000", []string{"198.51.100.1, bogus, 10.1.1.1"}, "10.1.1.1"},
		{"garbage from the peer itself", trusted, "127.0.0.1:5000", []string{"bogus"}, "127.0.0.1"},
		{"IPv6 peer and client", trusted, "[fd00::1]:5000", []string{"2001:db8::7"}, "2001:db8::7"},
		{"mapped IPv4 client", trusted, "127.0.0.1:5000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Handler{opts: Options{TrustedProxies: tt.proxies}}
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := h.clientAddr(r); got != tt.want {
				t.Errorf("clientAddr = %q; want %q", got, tt.want)
			}
		})
	}
}

// FuzzForwardedFor: whatever the header holds, the client named is the
// peer or an address written in it, and never a trusted proxy unless
// every hop up to it is one.
func FuzzForwardedFor(f *testing.F) {
	for _, s := range []string{"198.51.100.1", "1.2.3.4, 10.0.0.1", "bogus, 10.0.0.1", "", ",,,", "::ffff:10.0.0.1, 2001:db8::1"} {
		f.Add(s)
	}
	trusted := func(a netip.Addr) bool { return netip.MustParsePrefix("10.0.0.0/8").Contains(a) }
	peer := netip.MustParseAddr("10.9.9.9")
	f.Fuzz(func(t *testing.T, xff string) {
		got := forwardedFor([]string{xff}, peer, trusted)
		if got == peer {
			return
		}
		found := false
		for hop := range strings.SplitSeq(xff, ",") {
			if a, err := netip.ParseAddr(strings.TrimSpace(hop)); err == nil && a.Unmap() == got {
				found = true
			}
		}
		if !found {
			t.Fatalf("forwardedFor(%q) = %v: neither the peer nor a hop of the header", xff, got)
		}
	})
}

// TestHTTPInFlightPerIdentity: two users × 6 calls held in flight with
// max_in_flight_per_client = 4, through one proxy. Behind a trusted
// proxy each user gets 4 calls in and 2 refused, whatever the other
// does; from an untrusted peer X-Forwarded-For is ignored, so both are
// the proxy's address and share its 4. With the static token every
// caller is that token's holder: one identity.
func TestHTTPInFlightPerIdentity(t *testing.T) {
	proxy := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	tests := []struct {
		name    string
		opts    Options
		auth    string
		inA     int // of user A's 6, admitted
		inB     int // of user B's 6, admitted after A's
		refused string
	}{
		{"trusted proxy", Options{TrustedProxies: proxy}, "", 4, 4, "address 198.51.100.2"},
		{"untrusted proxy", Options{}, "", 4, 0, "address 127.0.0.1"},
		{"static token", Options{TrustedProxies: proxy, AuthToken: "secret"}, "Authorization: Bearer secret\r\n", 4, 0, "the static bearer token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, rec := logtest.New()
			srv := newServer(t, newFixture(), host.Options{Logger: logger})
			tt.opts.MaxInFlightPerClient = 4
			ht := startHTTP(t, srv, tt.opts)
			burst := func(user string) (in int) {
				for range 6 {
					_, _, line := openPost(t, ht, tt.auth+"X-Forwarded-For: "+user+"\r\n", 100)
					switch {
					case strings.HasPrefix(line, "HTTP/1.1 100"):
						in++
					case !strings.HasPrefix(line, "HTTP/1.1 429"):
						t.Fatalf("user %s: got %q; want 100 Continue or 429", user, line)
					}
				}
				return in
			}
			inA := burst("198.51.100.1")
			inB := burst("198.51.100.2")
			if inA != tt.inA || inB != tt.inB {
				t.Errorf("admitted %d of user A's 6 calls and %d of user B's; want %d and %d", inA, inB, tt.inA, tt.inB)
			}
			if !logged(rec, "WARN request refused", "limit=max_in_flight_per_client", "client="+tt.refused) {
				t.Errorf("no refusal logged naming %q:\n%s", tt.refused, strings.Join(rec.All(), "\n"))
			}
		})
	}
}

// TestHTTPRatePerClient: rate_per_client counts each client's POSTs in
// the store: over it, 429 with Retry-After, while another client goes
// on. Two handlers (replicas) sharing one store count one total, in
// process and in a real redis-server; with Redis stopped the count falls
// back to each replica's own, which the log says, and the calls go on;
// after Redis restarts the store counts again, with no restart of the
// replica.
func TestHTTPRatePerClient(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testRatePerClient(t, store.NewMemory(), nil) })
	t.Run("redis", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs redis-server")
		}
		rs := redistest.Start(t)
		opts, err := store.ParseRedisURL(rs.URL())
		if err != nil {
			t.Fatal(err)
		}
		st := store.NewRedis(opts)
		t.Cleanup(func() { st.Close() })
		testRatePerClient(t, st, rs)
	})
}

func testRatePerClient(t *testing.T, shared store.Store, rs *redistest.Server) {
	proxy := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	replica := func() (*httpTest, *logtest.Recorder) {
		logger, rec := logtest.New()
		srv := newServer(t, newFixture(), host.Options{Logger: logger})
		return startHTTP(t, srv, Options{TrustedProxies: proxy, RatePerClient: 3, RatePeriod: time.Minute, Store: shared}), rec
	}
	send := func(ht *httpTest, user string) (int, string, string) {
		t.Helper()
		resp := ht.client().post(initialize, "X-Forwarded-For", user)
		return resp.StatusCode, resp.Header.Get("Retry-After"), readAll(t, resp)
	}
	a, recA := replica()
	b, recB := replica()
	for i, ht := range []*httpTest{a, b, a} { // 3 from one user, across both
		if code, _, body := send(ht, "198.51.100.1"); code != 200 {
			t.Fatalf("call %d: got %d %s; want 200", i, code, body)
		}
	}
	for _, ht := range []*httpTest{b, a} {
		// 3 per minute: one more fits 20 s after the first (less the
		// time the calls took).
		code, retry, body := send(ht, "198.51.100.1")
		if n, err := strconv.Atoi(retry); code != http.StatusTooManyRequests || err != nil || n < 10 || n > 20 ||
			!strings.Contains(body, "Too Many Requests: more than 3 requests per 1m0s from this client; retry after "+retry+"s") {
			t.Errorf("4th call: got %d, Retry-After %q, %s; want 429, at most 20 and the limit named", code, retry, body)
		}
	}
	if !logged(recA, "WARN request refused", "limit=rate_per_client", "client=address 198.51.100.1") {
		t.Errorf("no refusal logged:\n%s", strings.Join(recA.All(), "\n"))
	}
	if code, _, body := send(b, "198.51.100.2"); code != 200 {
		t.Errorf("another user: got %d %s; want 200", code, body)
	}
	if rs == nil {
		return
	}

	rs.Stop()
	for i := range 4 { // counted by b alone
		code, _, body := send(b, "198.51.100.3")
		if want := map[bool]int{true: 200, false: 429}[i < 3]; code != want {
			t.Errorf("Redis down, call %d: got %d %s; want %d (counted in this replica)", i, code, body, want)
		}
	}
	if !logged(recB, "WARN rate_per_client: the store failed; counting in this replica only until it answers") {
		t.Errorf("the fallback was not logged:\n%s", strings.Join(recB.All(), "\n"))
	}
	rs.Restart()
	tick := time.NewTicker(20 * time.Millisecond) // go-redis reconnects on its own
	defer tick.Stop()
	for i, deadline := 0, time.Now().Add(guard); !logged(recB, "INFO rate_per_client: the store answers again; counting across replicas"); i++ {
		if code, _, body := send(b, fmt.Sprintf("203.0.113.%d", i%250)); code != 200 { // a new user each time: none reaches the limit
			t.Fatalf("after Redis restarted: got %d %s; want 200", code, body)
		}
		<-tick.C
		if time.Now().After(deadline) {
			t.Fatalf("the store never answered again:\n%s", strings.Join(recB.All(), "\n"))
		}
	}
}

// logged reports whether rec holds a record starting with prefix that
// contains every one of parts.
func logged(rec *logtest.Recorder, prefix string, parts ...string) bool {
	for _, l := range rec.Matching(prefix) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(l, p) }) {
			return true
		}
	}
	return false
}
