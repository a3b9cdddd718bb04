package component

import "net/http"

// HTTPDoer sends a request; the sandbox's client checks every dialled
// address against the plugin's egress rules.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

func addHTTP(add func(iface, name string, f HostFunc)) {}
