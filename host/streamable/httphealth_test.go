package streamable

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// TestHTTPProbes: /healthz answers while the process serves, /readyz only
// between the initial load and shutdown, both past the Host and token
// checks that guard everything else.
func TestHTTPProbes(t *testing.T) {
	reg := plugins.NewRegistry()
	t.Cleanup(func() { reg.Close(context.Background()) })
	srv := host.New(reg, host.Options{Logger: quietLog, StartupWait: -1})
	t.Cleanup(srv.Close)
	h := NewHandler(srv, Options{AuthToken: "secret"})
	t.Cleanup(h.Close)

	probe := func(method, path string) int {
		r := httptest.NewRequest(method, "http://10.1.2.3:8080"+path, nil) // a pod address, no token
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	type want struct {
		method, path string
		code         int
	}
	check := func(stage string, wants []want) {
		t.Helper()
		for _, w := range wants {
			if got := probe(w.method, w.path); got != w.code {
				t.Errorf("%s: %s %s = %d; want %d", stage, w.method, w.path, got, w.code)
			}
		}
	}
	check("before the initial load", []want{
		{"GET", "/healthz", 200}, {"HEAD", "/healthz", 200}, {"GET", "/readyz", 503},
		{"POST", "/readyz", 405}, {"GET", "/mcp", 403}, // the Host check still guards MCP
	})

	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(), config.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg.Swap(context.Background(), g)
	check("after the initial load", []want{{"GET", "/healthz", 200}, {"GET", "/readyz", 200}, {"HEAD", "/readyz", 200}})

	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("shutting down", []want{{"GET", "/healthz", 200}, {"GET", "/readyz", http.StatusServiceUnavailable}})
}
