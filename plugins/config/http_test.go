package config

import (
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
