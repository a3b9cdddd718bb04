package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 {
		t.Fatalf("GET /metrics = %d", w.Code)
	}
	b, _ := io.ReadAll(w.Body)
	return string(b)
}

func TestMetricsMove(t *testing.T) {
	reg := plugins.NewRegistry()
	t.Cleanup(func() { reg.Close(context.Background()) })
	m := New(reg)
	m.ToolCall("p", "p_echo", 2*time.Millisecond, "")
	m.ToolCall("p", "p_echo", 3*time.Millisecond, "trap")
	m.ToolCall("q", "q_slow", time.Second, "timeout")
	m.Reloaded(plugins.ReloadReport{Initial: true})
	m.Reloaded(plugins.ReloadReport{Err: errors.New("bad toml")})
	m.Reloaded(plugins.ReloadReport{Failures: []plugins.Failure{{Plugin: "a"}, {Plugin: "b"}}})

	text := scrape(t, m)
	for _, want := range []string{
		`mcphost_tool_call_duration_seconds_count{plugin="p",tool="p_echo"} 2`,
		`mcphost_tool_call_duration_seconds_count{plugin="q",tool="q_slow"} 1`,
		`mcphost_tool_call_duration_seconds_bucket{plugin="p",tool="p_echo",le="0.0025"} 1`,
		`mcphost_tool_faults_total{kind="trap",plugin="p"} 1`,
		`mcphost_tool_faults_total{kind="timeout",plugin="q"} 1`,
		`mcphost_reloads_total{result="ok"} 2`,
		`mcphost_reloads_total{result="config_error"} 1`,
		`mcphost_reload_plugin_failures_total 2`,
		`mcphost_sessions{era="2025-11-25"} 0`,
		`mcphost_listeners{era="2026-07-28"} 0`,
		`mcphost_inflight_requests 0`,
		`go_goroutines `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

// TestToolCallAllocs: once a tool's series exists, observing a call
// allocates nothing.
func TestToolCallAllocs(t *testing.T) {
	reg := plugins.NewRegistry()
	t.Cleanup(func() { reg.Close(context.Background()) })
	m := New(reg)
	m.ToolCall("p", "p_echo", time.Millisecond, "")
	if n := testing.AllocsPerRun(100, func() { m.ToolCall("p", "p_echo", time.Millisecond, "") }); n != 0 {
		t.Errorf("ToolCall allocates %v times per call; want 0", n)
	}
}

func BenchmarkToolCall(b *testing.B) {
	reg := plugins.NewRegistry()
	defer reg.Close(context.Background())
	m := New(reg)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ToolCall("p", "p_echo", time.Millisecond, "")
		}
	})
}
