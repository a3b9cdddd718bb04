package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplicasDrain: two replicas behind haproxy with the configuration
// docs/operations.md documents (health checks on /readyz, retries and
// redispatch), and official Go SDK clients calling tools through it
// without pause. One replica gets SIGTERM: its /readyz turns 503 while it
// still serves (a request sent to it directly is answered), haproxy stops
// sending it work, it exits 0 once its drain and shutdown are done, and
// the other replica serves the rest. Not one call fails.
func TestReplicasDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two mcphost serve and haproxy")
	}
	haproxy := needHAProxy(t)
	reps, _ := startConformanceReplicas(t, "", "--no-watch")
	lb := runHAProxy(t, haproxy, func(addr string) string { return documentedHAProxy(t, addr, reps[0].Base, reps[1].Base) })

	// Two clients call without pause until told to stop, counting.
	rec := &replicaRecorder{next: http.DefaultTransport}
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var failures []string
	stop := make(chan struct{})
	var clients sync.WaitGroup
	for c := range 2 {
		client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("drain-%d", c), Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: &http.Client{Transport: rec}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatalf("connect through haproxy: %v", err)
		}
		defer cs.Close()
		clients.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
				cancel()
				if err != nil || res.IsError || len(res.Content) != 1 {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%v %+v", err, res))
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		})
	}
	stopped := false
	end := func() {
		if !stopped {
			stopped = true
			close(stop)
			clients.Wait()
		}
	}
	defer end()

	// poll waits (bounded) until cond holds.
	poll := func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(time.Minute)
		for !cond() {
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("%s: not within a minute (%d calls ok, %d failed)", what, ok.Load(), failed.Load())
			}
		}
	}
	poll("both replicas serving calls", func() bool { return slices.Equal(rec.replicas(), []string{"a", "b"}) })

	gone := reps[0]
	if err := gone.Proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	poll("/readyz of the stopping replica answering 503", func() bool {
		resp, err := http.Get(gone.Base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz of the stopping replica: %v (the listener closed before the drain)", err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	// Draining, it still serves what reaches it.
	req, _ := http.NewRequest(http.MethodPost, gone.Base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("a request to the draining replica: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("a request to the draining replica: %s; want 200 (served while draining)", resp.Status)
		}
	}
	select {
	case <-gone.Exited:
	case <-time.After(time.Minute):
		t.Fatal("the replica did not exit within a minute of SIGTERM")
	}
	if code := gone.State.ExitCode(); code != 0 {
		t.Errorf("the stopped replica exited %d; want 0", code)
	}
	before := ok.Load()
	poll("20 more calls after the replica exited", func() bool { return ok.Load() >= before+20 })
	end()
	t.Logf("%d calls ok, %d failed, through a SIGTERM of one of two replicas", ok.Load(), failed.Load())
	if n := failed.Load(); n != 0 {
		t.Errorf("%d calls failed through the drain; want 0: %v", n, failures)
	}
}

// startConformanceReplicas starts two replicas serving the conformance
// example, each with the same plugins.toml ([server] lines extra added) in
// a directory of its own, and the same request-state key, and returns them
// and their directories once both are ready.
func startConformanceReplicas(t *testing.T, extra string, args ...string) (reps [2]*systest.Replica, dirs [2]string) {
	t.Helper()
	conformance, err := filepath.Abs("../../examples/conformance")
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("[server]\nname = \"replicas\"\n%s\n[[plugin]]\nname = \"conformance\"\nsource = %q\ntool_prefix = \"\"\ntimeout = \"30s\"\n", extra, conformance)
	env := []string{"MCPHOST_REQUEST_STATE_KEY=replicas-test-shared-key"}
	for i := range reps {
		dirs[i] = t.TempDir()
		if err := os.WriteFile(filepath.Join(dirs[i], "plugins.toml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		reps[i] = systest.StartReplica(t, env, append([]string{"--config", filepath.Join(dirs[i], "plugins.toml")}, args...)...)
	}
	for _, r := range reps {
		systest.WaitOK(t, r.Base+"/readyz")
	}
	return reps, dirs
}

// documentedHAProxy is the haproxy configuration of docs/operations.md,
// bound to addr and sending to backends (one or two) instead of the
// example's ports, with the answering server named in Mcp-Replica.
func documentedHAProxy(t *testing.T, addr string, backends ...string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```haproxy\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/operations.md has no haproxy block")
	}
	cfg := string(m[1])
	replace := []string{"bind 127.0.0.1:8080", "bind " + addr,
		"backend mcphost\n", "backend mcphost\n    http-response set-header Mcp-Replica %[srv_name]\n"}
	for i, b := range backends {
		replace = append(replace, fmt.Sprintf("127.0.0.1:%d", 8081+i), strings.TrimPrefix(b, "http://"))
	}
	if len(backends) == 1 {
		replace = append(replace, "    server b 127.0.0.1:8082\n", "")
	}
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(cfg, replace[i]) {
			t.Fatalf("the documented haproxy configuration has no %q", replace[i])
		}
		cfg = strings.Replace(cfg, replace[i], replace[i+1], 1)
	}
	return cfg
}

// runHAProxy runs haproxy in the foreground on a free loopback port with
// the configuration config returns for that address, and returns its base
// URL once it answers.
func runHAProxy(t *testing.T, haproxy string, config func(addr string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(config(addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(haproxy, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	base := "http://" + addr
	systest.WaitOK(t, base+"/readyz")
	return base
}
