package streamable

import "net/http"

// Probe endpoints for load balancers and orchestrators (Kubernetes
// liveness and readiness). They answer before the Host, Origin and
// bearer-token checks, because probes come from the orchestrator with the
// pod's address as Host and no token, and they reveal nothing but
// "ok" or "not ready".
const (
	healthPath = "/healthz"
	readyPath  = "/readyz"
)

// probe answers GET and HEAD on /healthz (200 while the process serves
// HTTP) and /readyz (200 once the registry's initial load is done and
// until a drain or shutdown begins, 503 before and after), and reports
// whether it did.
func (h *Handler) probe(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != healthPath && r.URL.Path != readyPath {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return true
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == readyPath {
		h.probed.Store(true)
	}
	if r.URL.Path == readyPath && !h.ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready\n"))
		return true
	}
	w.Write([]byte("ok\n"))
	return true
}

// ready reports whether the initial plugin load is done and the handler
// is neither draining nor shutting down.
func (h *Handler) ready() bool {
	select {
	case <-h.srv.Ready():
		return !h.draining.Load() && !h.isClosing()
	default:
		return false
	}
}
