package host

// Stats is a snapshot of what a Server is serving, for metrics.
type Stats struct {
	// Sessions are the handshake-era sessions (stdio connections and
	// Mcp-Session-Id sessions that sent initialize, 2024-11-05 …
	// 2025-11-25); each is also its own listener for list_changed.
	Sessions int
	// Stateless are the stateless-era (2026-07-28) HTTP requests being
	// served, each on its own throw-away session, listens included.
	Stateless int
	// Listeners are the open subscriptions/listen requests (2026-07-28).
	Listeners int
	// InFlight are the requests being served concurrently across all
	// sessions (tool calls, reads, prompts, listens …).
	InFlight int
}

// Stats counts what srv is serving now. It takes each session's lock in
// turn, so call it at scrape time, not per request.
func (srv *Server) Stats() Stats {
	var st Stats
	srv.mu.Lock()
	st.Listeners = len(srv.listeners)
	ss := make([]*session, 0, len(srv.sessions))
	for s := range srv.sessions {
		ss = append(ss, s)
	}
	srv.mu.Unlock()
	for _, s := range ss {
		switch {
		case s.stateless:
			st.Stateless++
		case s.state.Load() != nil:
			st.Sessions++
		}
		s.mu.Lock()
		st.InFlight += len(s.inflight)
		s.mu.Unlock()
	}
	return st
}
