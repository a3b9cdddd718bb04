package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseConfigHTTPLimits(t *testing.T) {
	tests := []struct {
		name, src string
		want      ServerConfig // only the limits are compared
		err       string
	}{
		{"defaults", "[server]\n", ServerConfig{}, ""},
		{"all set", `
[server]
body_timeout = "5s"
max_in_flight_per_session = 8
max_in_flight_per_client = 32
max_sessions = 100
`, ServerConfig{BodyTimeout: 5 * time.Second, MaxInFlightPerSession: 8, MaxInFlightPerClient: 32, MaxSessions: 100}, ""},
		{"zero sessions", "[server]\nmax_sessions = 0\n", ServerConfig{}, `key "max_sessions": 0 is out of range [1, 1048576]`},
		{"tiny body timeout", "[server]\nbody_timeout = \"1us\"\n", ServerConfig{}, `key "body_timeout"`},
		{"negative in flight", "[server]\nmax_in_flight_per_client = -1\n", ServerConfig{}, `key "max_in_flight_per_client": -1 is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("plugins.toml", []byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v; want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Server
			if got.BodyTimeout != tt.want.BodyTimeout || got.MaxInFlightPerSession != tt.want.MaxInFlightPerSession ||
				got.MaxInFlightPerClient != tt.want.MaxInFlightPerClient || got.MaxSessions != tt.want.MaxSessions {
				t.Errorf("got %v %d %d %d; want %v %d %d %d", got.BodyTimeout, got.MaxInFlightPerSession, got.MaxInFlightPerClient, got.MaxSessions,
					tt.want.BodyTimeout, tt.want.MaxInFlightPerSession, tt.want.MaxInFlightPerClient, tt.want.MaxSessions)
			}
		})
	}
}

// TestParseConfigReplicaKeys: [server] trusted_proxies, rate_per_client
// and drain_grace, their defaults and their errors.
func TestParseConfigReplicaKeys(t *testing.T) {
	tests := []struct {
		name, src string
		proxies   []netip.Prefix
		rate      Rate
		drain     time.Duration
		err       string
	}{
		{"defaults", "[server]\n", nil, Rate{}, DefaultDrainGrace, ""},
		{"all set", `
[server]
trusted_proxies = ["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8"]
rate_per_client = "600/min"
drain_grace = "12s"
`, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
			netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fd00::/8")}, Rate{600, time.Minute}, 12 * time.Second, ""},
		{"no drain", "[server]\ndrain_grace = \"0s\"\n", nil, Rate{}, 0, ""},
		{"unmasked CIDR", "[server]\ntrusted_proxies = [\"10.1.2.3/8\"]\n", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Rate{}, DefaultDrainGrace, ""},
		{"rate per duration", "[server]\nrate_per_client = \"100/10s\"\n", nil, Rate{100, 10 * time.Second}, DefaultDrainGrace, ""},
		{"bad proxy", "[server]\ntrusted_proxies = [\"proxy.local\"]\n", nil, Rate{}, 0, `key "trusted_proxies": invalid address "proxy.local"`},
		{"bad rate", "[server]\nrate_per_client = \"600\"\n", nil, Rate{}, 0, `key "rate_per_client": invalid rate "600"`},
		{"zero rate", "[server]\nrate_per_client = \"0/min\"\n", nil, Rate{}, 0, `the count must be an integer`},
		{"bad period", "[server]\nrate_per_client = \"5/fortnight\"\n", nil, Rate{}, 0, `the period must be`},
		{"negative drain", "[server]\ndrain_grace = \"-1s\"\n", nil, Rate{}, 0, `key "drain_grace"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("plugins.toml", []byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v; want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Server
			if !slices.Equal(got.TrustedProxies, tt.proxies) || got.RatePerClient != tt.rate || got.DrainGrace != tt.drain {
				t.Errorf("got %v %v %v; want %v %v %v", got.TrustedProxies, got.RatePerClient, got.DrainGrace, tt.proxies, tt.rate, tt.drain)
			}
		})
	}
}

// FuzzParseRate: any string either fails or gives a positive count over
// a period of at least a second, which prints back to the same rate.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"600/min", "1/s", "100/10s", " 5 / hour ", "x/min", "9999999999/s", "1/0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.N < 1 || r.Per < time.Second {
			t.Fatalf("ParseRate(%q) = %+v", s, r)
		}
		if back, err := ParseRate(r.String()); err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %v, which reads back as %+v, %v", s, r, back, err)
		}
	})
}
