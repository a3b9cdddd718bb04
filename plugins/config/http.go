package config

import "time"

// The [server] keys of the HTTP transport's limits (issue 12): parsed
// here, hooked into [configParser.server] by one line. Zero means the
// host's default.

var serverHTTPKeys = []string{"body_timeout", "max_in_flight_per_session", "max_in_flight_per_client", "max_sessions"}

func init() { serverKeys = append(serverKeys, serverHTTPKeys...) }

// The largest values accepted: beyond them a limit is no limit.
const (
	maxBodyTimeout = time.Hour
	maxInFlight    = 1 << 20
	maxSessions    = 1 << 20
)

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
}
