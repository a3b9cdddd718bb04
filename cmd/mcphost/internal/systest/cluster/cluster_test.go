package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/redistest"
)

// The harness of the tests that run mcphost as replicas sharing a store
// (issue 31): a private redis-server, two `mcphost serve --http`
// replicas, each with its own config directory holding the same
// plugins.toml (as on Kubernetes, where each pod mounts its own copy),
// and one haproxy in front with the documented configuration (round
// robin; only 2025-era sessions stick). A case gets a *cluster and drives
// it through c.lb; add cases as functions over it (see
// replicastore_test.go).

// cluster is two replicas sharing a store behind haproxy.
type cluster struct {
	t     *testing.T
	redis *redistest.Server
	dirs  [2]string           // config directories
	reps  [2]*systest.Replica // the running processes
	lb    string              // haproxy's base URL
	env   []string
}

// clusterConf is the plugins.toml both replicas get unless a case gives
// its own: the conformance plugin (task-capable and eliciting tools) and
// a drop-in directory for reloads.
func clusterConf(t *testing.T) string {
	t.Helper()
	conformance, err := filepath.Abs("../../examples/conformance")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[server]\nname = \"replicas\"\nplugin_dir = \"dropins\"\n\n[[plugin]]\nname = \"conformance\"\nsource = %q\ntool_prefix = \"\"\ntimeout = \"60s\"\n", conformance)
}

// startCluster starts redis, two replicas configured with conf whose
// store is that redis (through MCPHOST_STORE, plus env), and haproxy.
// It skips without haproxy or redis-server, except under CI=true.
func startCluster(t *testing.T, conf string, env ...string) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("runs redis-server, two mcphost serve and haproxy")
	}
	haproxy := needHAProxy(t)
	c := &cluster{t: t, redis: redistest.Start(t)}
	c.env = append([]string{"MCPHOST_STORE=" + c.redis.URL(), "MCPHOST_REQUEST_STATE_KEY=replicas-test-shared-key"}, env...)
	for i := range c.reps {
		c.dirs[i] = t.TempDir()
		if err := os.WriteFile(filepath.Join(c.dirs[i], "plugins.toml"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		c.reps[i] = systest.StartReplica(t, c.env, "--config", filepath.Join(c.dirs[i], "plugins.toml"))
	}
	for _, r := range c.reps {
		systest.WaitOK(t, r.Base+"/readyz")
	}
	c.lb = startHAProxy(t, haproxy, c.reps[0].Base, c.reps[1].Base)
	return c
}

// sbinDirs are where Debian and others install daemons such as haproxy;
// a user's PATH often lacks them, so a lookup that stops at PATH reports
// an installed haproxy as missing.
var sbinDirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// lookDaemon finds name on PATH, then in dirs.
func lookDaemon(name string, dirs ...string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	for _, d := range dirs {
		if p, err2 := exec.LookPath(filepath.Join(d, name)); err2 == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH nor in %s: %w", name, strings.Join(dirs, ", "), err)
}

// needHAProxy returns haproxy's path (PATH, then the sbin directories);
// without it the test is skipped, or fails under CI=true.
func needHAProxy(t *testing.T) string {
	t.Helper()
	haproxy, err := lookDaemon("haproxy", sbinDirs...)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; .ci/run installs it with scripts/install-haproxy.sh", err)
		}
		t.Skipf("%v: install it (scripts/install-haproxy.sh does, with apt)", err)
	}
	return haproxy
}

// listenerReplica polls the replicas' metrics (bounded) until one reports
// a 2026-07-28 subscriptions/listen (a client SDK opens it in the
// background), and returns its index.
func listenerReplica(t *testing.T, reps []*systest.Replica) int {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		for i, r := range reps {
			if systest.ScrapeValue(t, r.Metrics, `mcphost_listeners{era="2026-07-28"}`) == "1" {
				return i
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("no replica reports the client's subscriptions/listen (mcphost_listeners)")
		}
	}
}

// index returns the replica haproxy calls name ("a" or "b").
func (c *cluster) index(name string) int {
	c.t.Helper()
	switch name {
	case "a":
		return 0
	case "b":
		return 1
	}
	c.t.Fatalf("no replica %q", name)
	return -1
}

// restart stops replica i and starts it again on the same port with the
// same config directory, and returns once it is ready.
func (c *cluster) restart(i int) {
	c.t.Helper()
	c.reps[i].Stop()
	addr := strings.TrimPrefix(c.reps[i].Base, "http://")
	c.reps[i] = systest.StartReplica(c.t, c.env, "--config", filepath.Join(c.dirs[i], "plugins.toml"), "--http", addr)
	systest.WaitOK(c.t, c.reps[i].Base+"/readyz")
}

// dropIn writes a drop-in plugin into replica i's plugin_dir, which
// reloads it (and only it).
func (c *cluster) dropIn(i int, name string, plugin []byte) {
	c.t.Helper()
	dir := filepath.Join(c.dirs[i], "dropins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".wasm"), plugin, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// lbClient sends stateless 2026-07-28 requests through the balancer as
// one caller (its Authorization header), declaring elicitation and the
// tasks extension, and notes which replica answered each.
type lbClient struct {
	t    *testing.T
	url  string
	auth string
	n    atomic.Int64
}

func (c *cluster) client(auth string) *lbClient {
	return &lbClient{t: c.t, url: c.lb + "/mcp", auth: auth}
}

// rpc sends one request and returns its reply and the replica that
// answered ("a" or "b", from haproxy's Mcp-Replica header).
func (c *lbClient) rpc(method, name string, params map[string]any) (systest.RPCReply, string) {
	c.t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	r, h := systest.PostStateless(c.t, c.url, c.auth, c.n.Add(1), method, name, params, caps)
	return r, h.Get("Mcp-Replica")
}

// taskTally counts the answers of task requests through the balancer.
type taskTally struct {
	requests, unknown, other int
	firstErr                 string
}

func (tt *taskTally) note(r systest.RPCReply, method, replica string) {
	tt.requests++
	if r.Error == nil {
		return
	}
	if r.Error.Code == -32602 && strings.Contains(r.Error.Message, "unknown task") {
		tt.unknown++
	} else {
		tt.other++
	}
	if tt.firstErr == "" {
		tt.firstErr = fmt.Sprintf("%s on replica %s: %d %s", method, replica, r.Error.Code, r.Error.Message)
	}
}

// startTask calls tool as a task and returns its id and the replica that
// runs it.
func (c *lbClient) startTask(tool string, args map[string]any) (id, runner string) {
	c.t.Helper()
	r, replica := c.rpc("tools/call", tool, map[string]any{"name": tool, "arguments": args})
	id, _ = r.Result["taskId"].(string)
	if r.Error != nil || r.Result["resultType"] != "task" || id == "" {
		c.t.Fatalf("tools/call %s: got %+v on %s; want a task", tool, r, replica)
	}
	return id, replica
}

// get sends tasks/get, tallying the answer.
func (c *lbClient) get(id string, tt *taskTally) map[string]any {
	c.t.Helper()
	r, replica := c.rpc("tasks/get", id, map[string]any{"taskId": id})
	tt.note(r, "tasks/get", replica)
	return r.Result
}

// await polls tasks/get (each a round trip through the balancer, bounded)
// until the task's status is one of want, and returns the task.
func (c *lbClient) await(id string, tt *taskTally, want ...string) map[string]any {
	c.t.Helper()
	var last map[string]any
	tick := time.NewTicker(50 * time.Millisecond) // polls another process, as a client does
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		last = c.get(id, tt)
		for _, w := range want {
			if last["status"] == w {
				return last
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			c.t.Fatalf("task %s never reached %v; last %v (tally %+v)", id, want, last, *tt)
		}
	}
}

// TestLookDaemon: an executable in an sbin directory is found although
// PATH lacks it (Debian's /usr/sbin/haproxy under a minimal PATH), and a
// missing one names every place looked.
func TestLookDaemon(t *testing.T) {
	sbin := t.TempDir()
	if err := os.WriteFile(filepath.Join(sbin, "haproxy"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct {
		name, want, wantErr string
	}{
		{"haproxy", filepath.Join(sbin, "haproxy"), ""},
		{"nosuchdaemon", "", "nosuchdaemon is not on PATH nor in " + sbin},
	} {
		got, err := lookDaemon(tc.name, sbin)
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("lookDaemon(%q) = %q, %v; want %q, error containing %q", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}
