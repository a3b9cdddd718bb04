package core

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitScrape scrapes url (an external process's) until series has the
// value want, for at most a minute, and returns the last value seen.
func waitScrape(t *testing.T, url, series, want string) string {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		got := systest.ScrapeValue(t, url, series)
		if got == want {
			return got
		}
		select {
		case <-tick.C:
		case <-deadline:
			return got
		}
	}
}

// TestMetricsScrape: `serve --metrics` serves Prometheus text on its own
// address, and the counters move with calls, sessions and reloads.
func TestMetricsScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	r := systest.StartReplica(t, nil, "--config", "testdata/e2e/plugins.toml", "--no-watch")
	systest.WaitOK(t, r.Base+"/readyz")
	calls := `mcphost_tool_call_duration_seconds_count{plugin="hash",tool="hash_sha256"}`
	if got := systest.ScrapeValue(t, r.Metrics, calls); got != "" {
		t.Errorf("before any call: %s = %s; want no series", calls, got)
	}
	// /readyz answers once the first generation is served; the load is
	// counted just after, by the reload's report.
	if got := waitScrape(t, r.Metrics, `mcphost_reloads_total{result="ok"}`, "1"); got != "1" {
		t.Errorf("after the initial load: reloads ok = %q; want 1", got)
	}
	if got := systest.ScrapeValue(t, r.Metrics, `mcphost_pool_instances{plugin="hash"}`); got == "" {
		t.Errorf("no pool_instances series for the hash plugin")
	}
	if resp, err := http.Get(r.Base + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the MCP address: %v %v; want 404 (metrics have their own address)", resp.StatusCode, err)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "metrics", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.Base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash_sha256", Arguments: map[string]any{"text": "hello"}}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "faulty_panic", Arguments: map[string]any{}}); err != nil || !res.IsError {
		t.Fatalf("faulty_panic: %v, %+v; want an isError result", err, res)
	}
	for _, c := range []struct{ series, want string }{
		{calls, "3"},
		{`mcphost_tool_call_duration_seconds_count{plugin="faulty",tool="faulty_panic"}`, "1"},
		{`mcphost_tool_faults_total{kind="trap",plugin="faulty"}`, "1"},
		{`mcphost_sessions{era="2025-11-25"}`, "1"},
		{`mcphost_listeners{era="2025-11-25"}`, "1"},
	} {
		if got := systest.ScrapeValue(t, r.Metrics, c.series); got != c.want {
			t.Errorf("after 3 calls and a trap in one session: %s = %q; want %s", c.series, got, c.want)
		}
	}
	cs.Close()
}
