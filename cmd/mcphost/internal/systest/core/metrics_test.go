package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replica is one `mcphost serve --http 127.0.0.1:0 --metrics 127.0.0.1:0`
// process.
type replica struct {
	base    string // http://127.0.0.1:PORT
	metrics string // http://127.0.0.1:PORT/metrics
	proc    *os.Process
	exited  chan struct{} // closed once the process has exited
	state   *os.ProcessState
	stop    func() // kills the process and waits for it (also done at cleanup)

	mu   sync.Mutex
	tail []string // its last log lines, printed when the test fails
}

// replicaTail is how many of a replica's last log lines a failed test
// prints.
const replicaTail = 200

var (
	reListening = regexp.MustCompile(`msg=listening addr=(http://127\.0\.0\.1:[0-9]+)/mcp`)
	reMetrics   = regexp.MustCompile(`msg="metrics listening" addr=(http://127\.0\.0\.1:[0-9]+/metrics)`)
)

// startReplica runs the mcphost binary with args and env and returns once
// both of its addresses are logged. The process is killed at cleanup.
func startReplica(t *testing.T, env []string, args ...string) *replica {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, mcphostBinary(t), append([]string{"serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{proc: cmd.Process, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		r.state = cmd.ProcessState
		pw.Close()
		close(r.exited)
	}()
	r.stop = func() {
		cmd.Process.Kill()
		<-r.exited
	}
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Logf("replica %s, its last log lines:\n%s", r.base, strings.Join(r.tail[max(0, len(r.tail)-replicaTail):], "\n"))
		}
	})
	found := make(chan *replica, 1)
	go func() {
		var base, metrics string
		sent := false
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.mu.Lock()
			if r.tail = append(r.tail, sc.Text()); len(r.tail) > 2*replicaTail {
				r.tail = append(r.tail[:0], r.tail[len(r.tail)-replicaTail:]...)
			}
			r.mu.Unlock()
			if m := reListening.FindStringSubmatch(sc.Text()); m != nil {
				base = m[1]
			}
			if m := reMetrics.FindStringSubmatch(sc.Text()); m != nil {
				metrics = m[1]
			}
			if base != "" && metrics != "" && !sent {
				r.base, r.metrics = base, metrics
				found <- r
				sent = true
			}
		}
	}()
	select {
	case r := <-found:
		return r
	case <-ctx.Done():
		t.Fatal("mcphost logged no listening and metrics lines")
		return nil
	}
}

// waitOK polls url (a probe of an external process) until it answers 200,
// for at most a minute.
func waitOK(t *testing.T, url string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s never answered 200", url)
		}
	}
}

// waitScrape scrapes url (an external process's) until series has the
// value want, for at most a minute, and returns the last value seen.
func waitScrape(t *testing.T, url, series, want string) string {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		got := scrapeValue(t, url, series)
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

// scrapeValue returns the value of the metric line starting with series
// ("" when absent).
func scrapeValue(t *testing.T, url, series string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestMetricsScrape: `serve --metrics` serves Prometheus text on its own
// address, and the counters move with calls, sessions and reloads.
func TestMetricsScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	r := startReplica(t, nil, "--config", "testdata/e2e/plugins.toml", "--no-watch")
	waitOK(t, r.base+"/readyz")
	calls := `mcphost_tool_call_duration_seconds_count{plugin="hash",tool="hash_sha256"}`
	if got := scrapeValue(t, r.metrics, calls); got != "" {
		t.Errorf("before any call: %s = %s; want no series", calls, got)
	}
	// /readyz answers once the first generation is served; the load is
	// counted just after, by the reload's report.
	if got := waitScrape(t, r.metrics, `mcphost_reloads_total{result="ok"}`, "1"); got != "1" {
		t.Errorf("after the initial load: reloads ok = %q; want 1", got)
	}
	if got := scrapeValue(t, r.metrics, `mcphost_pool_instances{plugin="hash"}`); got == "" {
		t.Errorf("no pool_instances series for the hash plugin")
	}
	if resp, err := http.Get(r.base + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the MCP address: %v %v; want 404 (metrics have their own address)", resp.StatusCode, err)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "metrics", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
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
		if got := scrapeValue(t, r.metrics, c.series); got != c.want {
			t.Errorf("after 3 calls and a trap in one session: %s = %q; want %s", c.series, got, c.want)
		}
	}
	cs.Close()
}
