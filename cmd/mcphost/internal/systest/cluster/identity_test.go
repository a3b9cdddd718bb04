package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplicaLimitsPerIdentity: two users, from two addresses, behind the
// documented haproxy (option forwardfor), each sends a burst of 6 calls
// that stay in flight (each waits for its user to answer an elicitation)
// with max_in_flight_per_client = 4, user A's burst first. With haproxy in
// trusted_proxies each user is its own client: 4 calls in and 2 refused
// (429) for each, whatever the other did. Without it, X-Forwarded-For from
// that peer is ignored: both users are haproxy's address, and user A's
// burst leaves user B nothing.
func TestReplicaLimitsPerIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve and haproxy")
	}
	haproxy := needHAProxy(t)
	conformance, err := filepath.Abs("../../examples/conformance")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		trusted  string
		inA, inB int
	}{
		{"trusted proxy", `trusted_proxies = ["127.0.0.1"]`, 4, 4},
		{"untrusted proxy", ``, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := fmt.Sprintf("[server]\nmax_in_flight_per_client = 4\n%s\n\n[[plugin]]\nname = \"conformance\"\nsource = %q\ntool_prefix = \"\"\ntimeout = \"1m\"\nmax_instances = 8\n",
				tc.trusted, conformance)
			if err := os.WriteFile(filepath.Join(dir, "plugins.toml"), []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := systest.StartReplica(t, nil, "--config", filepath.Join(dir, "plugins.toml"), "--no-watch")
			systest.WaitOK(t, rep.Base+"/readyz")
			lb := runHAProxy(t, haproxy, func(addr string) string { return documentedHAProxy(t, addr, rep.Base) })

			inA, err := burst(t, lb, "127.0.0.2")
			if err != nil {
				t.Fatalf("user A: %v", err)
			}
			inB, err := burst(t, lb, "127.0.0.3")
			if err != nil && (tc.inB != 0 || !strings.Contains(err.Error(), "Too Many Requests")) {
				t.Fatalf("user B: %v", err)
			}
			if inA != tc.inA || inB != tc.inB {
				t.Errorf("calls let in: %d of user A's 6, then %d of user B's 6; want %d and %d", inA, inB, tc.inA, tc.inB)
			}
			if err != nil {
				t.Logf("user B could not even initialize: %v", err)
			}
		})
	}
}

// burst connects a 2025-11-25 Go SDK client from the loopback address
// from through lb and sends 6 test_elicitation calls at once. Each call
// let in asks its question and waits (the answer would be a POST, which
// the full limit would refuse too); each refused one fails with 429.
// burst returns how many were let in once all 6 are accounted for, or the
// error of a connection refused; the waiting calls end with the test.
func burst(t *testing.T, lb, from string) (int, error) {
	t.Helper()
	asked := make(chan struct{}, 6)
	ctx, cancel := context.WithCancel(context.Background())
	client := mcp.NewClient(&mcp.Implementation{Name: "user-" + from, Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	hc := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		cancel()
		return 0, fmt.Errorf("connect through haproxy: %w", err)
	}
	t.Cleanup(func() { cs.Close() })
	t.Cleanup(cancel) // first: the waiting calls and questions end
	ended := make(chan error, 6)
	for range 6 {
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "hold"}})
			ended <- err
		}()
	}
	in, out := 0, 0
	timeout := time.After(time.Minute)
	for in+out < 6 {
		select {
		case <-asked:
			in++
		case err := <-ended:
			if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
				t.Fatalf("user %s: a call ended with %v before the test; want it waiting or refused with 429", from, err)
			}
			out++
		case <-timeout:
			t.Fatalf("user %s: %d calls let in and %d refused after a minute; want 6 in all", from, in, out)
		}
	}
	return in, nil
}

// TestReplicaRatePerClient: rate_per_client = "3/min" on two replicas
// that share a redis-server store, behind the documented haproxy (round
// robin, X-Forwarded-For from a trusted proxy). One user's requests are
// counted together wherever they land: 3 answered, by both replicas, and
// the 4th refused with 429 and Retry-After; another user is answered.
func TestReplicaRatePerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve, redis-server and haproxy")
	}
	haproxy := needHAProxy(t)
	rs := redistest.Start(t)
	env := []string{"MCPHOST_STORE=" + rs.URL()}
	var reps [2]*systest.Replica
	for i := range reps {
		dir := t.TempDir()
		conf := "[server]\nrate_per_client = \"3/min\"\ntrusted_proxies = [\"127.0.0.1\"]\n"
		if err := os.WriteFile(filepath.Join(dir, "plugins.toml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		reps[i] = systest.StartReplica(t, env, "--config", filepath.Join(dir, "plugins.toml"), "--no-watch")
		systest.WaitOK(t, reps[i].Base+"/readyz")
	}
	lb := runHAProxy(t, haproxy, func(addr string) string { return documentedHAProxy(t, addr, reps[0].Base, reps[1].Base) })

	post := func(from string) (status int, retry, replica string) {
		t.Helper()
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		hc := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodPost, lb+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rate","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("POST from %s: %v", from, err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Replica")
	}
	answered := map[string]bool{}
	for i := range 3 {
		status, _, replica := post("127.0.0.2")
		if status != http.StatusOK {
			t.Fatalf("user A's request %d: %d; want 200", i, status)
		}
		answered[replica] = true
	}
	if !answered["a"] || !answered["b"] {
		t.Errorf("user A's 3 requests were answered by %v; want both replicas", answered)
	}
	if status, retry, _ := post("127.0.0.2"); status != http.StatusTooManyRequests || retry == "" {
		t.Errorf("user A's 4th request: %d, Retry-After %q; want 429 with Retry-After (counted across replicas)", status, retry)
	}
	if status, _, _ := post("127.0.0.3"); status != http.StatusOK {
		t.Errorf("user B's request: %d; want 200", status)
	}
}
