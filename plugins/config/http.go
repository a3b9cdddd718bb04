package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The [server] keys of the HTTP transport's limits (issue 12) and of
// replicas behind a balancer (issue 31): parsed here, hooked into
// [configParser.server] by one line. Zero means the host's default.

var serverHTTPKeys = []string{"body_timeout", "max_in_flight_per_session", "max_in_flight_per_client", "max_sessions",
	"trusted_proxies", "rate_per_client", "drain_grace"}

func init() { serverKeys = append(serverKeys, serverHTTPKeys...) }

// The largest values accepted: beyond them a limit is no limit.
const (
	maxBodyTimeout = time.Hour
	maxInFlight    = 1 << 20
	maxSessions    = 1 << 20
	maxDrainGrace  = 10 * time.Minute
	maxRate        = 1 << 30
)

// DefaultDrainGrace is how long a replica told to stop keeps serving
// while /readyz answers 503, so that its balancer stops sending it work
// first: a few of haproxy's or Kubernetes' probe periods.
const DefaultDrainGrace = 5 * time.Second

// Rate is a number of requests per period: rate_per_client = "600/min".
// The zero Rate is no limit.
type Rate struct {
	N   int
	Per time.Duration
}

func (r Rate) String() string {
	if r.N == 0 {
		return "unlimited"
	}
	for _, u := range rateUnits {
		if u.d == r.Per {
			return strconv.Itoa(r.N) + "/" + u.name
		}
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

var rateUnits = []struct {
	name string
	d    time.Duration
}{{"s", time.Second}, {"sec", time.Second}, {"second", time.Second},
	{"min", time.Minute}, {"minute", time.Minute}, {"h", time.Hour}, {"hour", time.Hour}}

// ParseRate reads "N/unit" (unit s, sec, second, min, minute, h or hour)
// or "N/duration" ("100/10s").
func ParseRate(s string) (Rate, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("invalid rate %q (want requests/period, like \"600/min\")", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 1 || n > maxRate {
		return Rate{}, fmt.Errorf("invalid rate %q: the count must be an integer in [1, %d]", s, maxRate)
	}
	unit = strings.TrimSpace(unit)
	for _, u := range rateUnits {
		if u.name == unit {
			return Rate{N: n, Per: u.d}, nil
		}
	}
	d, err := time.ParseDuration(unit)
	if err != nil || d < time.Second || d > 24*time.Hour {
		return Rate{}, fmt.Errorf("invalid rate %q: the period must be s, min, h or a duration in [1s, 24h]", s)
	}
	return Rate{N: n, Per: d}, nil
}

// ParsePrefix reads an address ("10.0.0.7", "::1") as a one-address
// prefix, or a CIDR ("10.0.0.0/8").
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("invalid CIDR %q: %w", s, err)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid address %q: %w", s, err)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func (p *configParser) serverHTTP(s section, m map[string]any, sc *ServerConfig) {
	if v, ok := s.duration(m, "body_timeout", time.Millisecond, maxBodyTimeout); ok {
		sc.BodyTimeout = v
	}
	if v, ok := s.integer(m, "max_in_flight_per_session", 1, maxInFlight); ok {
		sc.MaxInFlightPerSession = int(v)
	}
	if v, ok := s.integer(m, "max_in_flight_per_client", 1, maxInFlight); ok {
		sc.MaxInFlightPerClient = int(v)
	}
	if v, ok := s.integer(m, "max_sessions", 1, maxSessions); ok {
		sc.MaxSessions = int(v)
	}
	if v, ok := s.strings(m, "trusted_proxies"); ok {
		sc.TrustedProxies = nil
		for _, e := range v {
			pfx, err := ParsePrefix(strings.TrimSpace(e))
			if err != nil {
				s.errf("trusted_proxies", "%v", err)
				continue
			}
			sc.TrustedProxies = append(sc.TrustedProxies, pfx)
		}
	}
	if v, ok := s.str(m, "rate_per_client"); ok {
		r, err := ParseRate(v)
		if err != nil {
			s.errf("rate_per_client", "%v", err)
		} else {
			sc.RatePerClient = r
		}
	}
	if v, ok := s.duration(m, "drain_grace", 0, maxDrainGrace); ok {
		sc.DrainGrace = v
	}
}
