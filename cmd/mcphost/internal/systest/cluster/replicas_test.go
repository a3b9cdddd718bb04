package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplicas runs two replicas behind haproxy (round-robin, no
// stickiness) and drives them with the official Go SDK in 2026-07-28
// mode: lists, calls and reads land on both; an input_required retry
// lands on the replica that did not issue the requestState (they share
// the key); and the replica holding the client's subscriptions/listen
// tells it of its reload. A 2025-11-25 session through the same balancer
// sticks to its replica (and fails without the stick rules). haproxy names the replica that answered in an
// Mcp-Replica response header (its own srv_name), so the test sees where
// each request went without trusting mcphost to say.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two mcphost serve and haproxy")
	}
	haproxy := needHAProxy(t)
	// The same configuration for both, each in a directory of its own so
	// that one can be reloaded alone (a drop-in plugin, as a rolling
	// change would reach one replica first).
	reps, dirs := startConformanceReplicas(t, "plugin_dir = \"dropins\"\n")
	lb := startHAProxy(t, haproxy, reps[0].Base, reps[1].Base)

	rec := &replicaRecorder{next: http.DefaultTransport}
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "judge", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: &http.Client{Transport: rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect through haproxy: %v", err)
	}
	defer cs.Close()

	// Lists, calls and reads, enough of each to reach both replicas.
	for range 4 {
		systest.CheckEra(t, cs, "2026-07-28")
	}
	if got := rec.replicas(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("requests were answered by %v; want both replicas a and b", got)
	}

	// An input_required round whose retry crossed replicas. Requests
	// alternate, but the SDK's own listen request may fall in between, so
	// a few rounds are allowed; each must succeed.
	crossed := false
	for i := 0; i < 4 && !crossed; i++ {
		rec.reset()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "2+2?"}})
		if err != nil || systest.TextOf(t, res) != "LLM response: sampled" {
			t.Fatalf("test_sampling through haproxy: %v %+v", err, res)
		}
		first, retry := rec.round()
		if first == "" || retry == "" {
			t.Fatalf("test_sampling: first attempt on %q, retry on %q; want an input_required round", first, retry)
		}
		crossed = first != retry
		t.Logf("input_required round %d: first attempt on %s, retry on %s", i, first, retry)
	}
	if !crossed {
		t.Error("no input_required retry landed on the other replica")
	}

	// A 2025-11-25 session through the same balancer: its requests stick
	// to the replica that created it, so every one of them succeeds.
	sticky := &replicaRecorder{next: http.DefaultTransport}
	old := mcp.NewClient(&mcp.Implementation{Name: "replicas-2025", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "judge", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	cs25, err := old.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: &http.Client{Transport: sticky}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("2025-11-25 connect through haproxy: %v", err)
	}
	for range 2 {
		systest.CheckEra(t, cs25, "2025-11-25")
	}
	if got := sticky.replicas(); len(got) != 1 {
		t.Errorf("one 2025-11-25 session was answered by replicas %v; want one", got)
	}
	cs25.Close()

	// The reload: find the replica holding the listen stream, reload it
	// alone, and hear of it through that stream.
	held := listenerReplica(t, reps[:])
	drop := filepath.Join(dirs[held], "dropins")
	if err := os.MkdirAll(drop, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drop, "extra.wasm"), systest.WasmPlugin("extra", []string{"x"}, nil, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(systest.NoteTimeout):
		t.Fatalf("no tools/list_changed through subscriptions/listen after replica %d reloaded", held)
	}
}

// startHAProxy runs haproxy in the foreground on a free loopback port with
// the README's configuration: round-robin over backends, sticky only for
// requests that carry an Mcp-Session-Id (2025-era sessions; the id is
// learned from the response that created it). It names the server that
// answered in Mcp-Replica, and returns its base URL once it answers.
func startHAProxy(t *testing.T, haproxy string, backends ...string) string {
	t.Helper()
	return runHAProxy(t, haproxy, func(addr string) string { return replicasHAProxy(addr, backends...) })
}

func replicasHAProxy(addr string, backends ...string) string {
	var servers strings.Builder
	for i, b := range backends {
		fmt.Fprintf(&servers, "    server %c %s\n", 'a'+i, strings.TrimPrefix(b, "http://"))
	}
	return fmt.Sprintf(`global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 5m
    timeout server 5m
frontend mcp
    bind %s
    default_backend replicas
backend replicas
    balance roundrobin
    stick-table type string len 64 size 100k expire 30m
    stick on req.hdr(Mcp-Session-Id)
    stick store-response res.hdr(Mcp-Session-Id)
    http-response set-header Mcp-Replica %%[srv_name]
%s`, addr, servers.String())
}

// replicaRecorder is an http.RoundTripper that notes, for the tools/call
// requests it carries, which replica answered the first attempt and which
// the retry that carried a requestState.
type replicaRecorder struct {
	next http.RoundTripper

	mu           sync.Mutex
	seen         map[string]bool
	first, retry string
}

func (rr *replicaRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := rr.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	replica := resp.Header.Get("Mcp-Replica")
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.seen == nil {
		rr.seen = map[string]bool{}
	}
	if replica != "" {
		rr.seen[replica] = true
	}
	if r.Header.Get("Mcp-Method") == "tools/call" {
		if bytes.Contains(body, []byte(`"requestState"`)) {
			rr.retry = replica
		} else {
			rr.first = replica
		}
	}
	return resp, nil
}

// replicas lists the replicas that answered, sorted.
func (rr *replicaRecorder) replicas() []string {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Sorted(maps.Keys(rr.seen))
}

func (rr *replicaRecorder) reset() {
	rr.mu.Lock()
	rr.first, rr.retry = "", ""
	rr.mu.Unlock()
}

func (rr *replicaRecorder) round() (first, retry string) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.first, rr.retry
}
