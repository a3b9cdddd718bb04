package streamable

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// TestHTTPDrain: once Serve's context ends, /readyz answers 503 for
// DrainGrace while MCP requests are still served (each connection closing
// after its response); then the shutdown refuses new work and Serve
// returns. Without a probe of /readyz before, there is no drain.
func TestHTTPDrain(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, probed := range []bool{true, false} {
		t.Run(map[bool]string{true: "probed", false: "never probed"}[probed], func(t *testing.T) {
			srv := newServer(t, newFixture(), host.Options{})
			h := NewHandler(srv, Options{DrainGrace: time.Hour}) // ended by the hook below
			h.testHookDrainEnd = make(chan struct{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			base := "http://" + ln.Addr().String()
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- h.serve(ctx, ln) }()
			get := func(path string) int {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if probed {
				if got := get(readyPath); got != 200 {
					t.Fatalf("/readyz before the signal: %d; want 200", got)
				}
			}
			stop()
			returned := func(what string) {
				t.Helper()
				select {
				case err := <-served:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(guard):
					t.Fatal(what)
				}
			}
			if !probed {
				returned("Serve still draining though /readyz was never probed")
				return
			}
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for deadline := time.Now().Add(guard); get(readyPath) != http.StatusServiceUnavailable; <-tick.C {
				if time.Now().After(deadline) {
					t.Fatal("/readyz never answered 503 after the context ended")
				}
			}
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(ping))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("a request while draining: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"protocolVersion"`) || !resp.Close {
				t.Errorf("a request while draining: %d close=%v %s; want 200, served, and its connection closed", resp.StatusCode, resp.Close, body)
			}
			if got := get(healthPath); got != 200 {
				t.Errorf("/healthz while draining: %d; want 200", got)
			}
			close(h.testHookDrainEnd)
			returned("Serve did not return after the drain")
			if _, err := http.Get(base + healthPath); err == nil {
				t.Error("the listener still answers after Serve returned")
			}
		})
	}
}
