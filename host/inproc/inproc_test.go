package inproc

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/hosttest"
)

func TestCallRunsTheDispatchPath(t *testing.T) {
	srv := newServer(t, host.Options{})
	tests := []struct {
		method, params, want string
	}{
		{"ping", ``, `"result":{}`},
		{"tools/call", `{"name":"nope"}`, `"code":-32602`},
		{"frobnicate", ``, `"code":-32601`},
	}
	for _, tt := range tests {
		got, err := Call(context.Background(), srv, tt.method, json.RawMessage(tt.params), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.method, err)
		}
		if !strings.Contains(string(got), tt.want) || !strings.Contains(string(got), `"id":1`) {
			t.Errorf("%s: got %s; want it to contain %s and id 1", tt.method, got, tt.want)
		}
	}
}

func TestFailedPluginCallIsLogged(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	srv := newServer(t, host.Options{Logger: log})
	got, err := Call(context.Background(), srv, "tools/call", json.RawMessage(`{"name":"test_trap"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"isError":true`) {
		t.Fatalf("result = %s; want isError", got)
	}
	if l := buf.String(); !strings.Contains(l, "plugin call failed") || !strings.Contains(l, "plugin=test") {
		t.Errorf("log = %q; want a warning naming the plugin", l)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newServer(t *testing.T, opts host.Options) *host.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = hosttest.QuietLog
	}
	srv := host.New(hosttest.LoadRegistry(t, hosttest.NewFixture(), "test"), opts)
	t.Cleanup(srv.Close)
	return srv
}
