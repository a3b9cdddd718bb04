package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	extism "github.com/extism/go-sdk"
)

var guardOnce sync.Once

// guardRedirects closes a hole in go-sdk v1.7.1: its http_request checks
// allowed_hosts for the first URL only, then calls http.DefaultClient.Do,
// which follows redirects anywhere. go-sdk offers no client of its own, so
// the only place to re-check every hop is http.DefaultClient's
// CheckRedirect, a process-wide setting. It is set once, before any plugin
// runs, and only changes requests made on behalf of an Extism plugin (their
// context carries the plugin); every other use of http.DefaultClient keeps
// its previous behaviour.
//
// A hop to a host outside the plugin's allowed_hosts fails the request, just
// as go-sdk fails a first request to such a host; the call then fails with
// KindHostPanic. Allowed hops are followed (at most 10, net/http's default).
func guardRedirects() {
	guardOnce.Do(func() {
		prev := http.DefaultClient.CheckRedirect
		http.DefaultClient.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if p, ok := req.Context().Value(extism.PluginCtxKey("plugin")).(*extism.Plugin); ok {
				if !hostAllowed(p.AllowedHosts, req.URL.Hostname()) {
					return fmt.Errorf("redirect to %q is not allowed: host not in allowed_hosts", req.URL.Redacted())
				}
			}
			if prev != nil {
				return prev(req, via)
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		}
	})
}
