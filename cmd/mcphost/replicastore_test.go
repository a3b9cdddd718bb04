package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplicasStore runs two replicas sharing a redis-server behind
// haproxy (cluster_test.go) and checks what issue 31 asks of tasks and
// list changes, as counted through the balancer:
//   - 2026-07-28 tasks: every tasks/get and tasks/cancel is answered by
//     whichever replica it reaches, never "unknown task", including while
//     and after the replica not running a task restarts; a finished
//     result outlives the restart of the replica that ran it;
//   - tasks that elicit (tasks/update, answered on either replica) all
//     complete;
//   - a reload on the replica that does not hold a client's
//     subscriptions/listen reaches that client (the official Go SDK), and
//     a 2025-11-25 session hears its own replica's reload.
//
// Tasks go through raw JSON-RPC: the Go SDK (v1.8) has no tasks API.
func TestReplicasStore(t *testing.T) {
	c := startCluster(t, clusterConf(t))
	t.Run("tasks", func(t *testing.T) { storeTasks(t, c) })
	t.Run("eliciting tasks", func(t *testing.T) { storeElicitingTasks(t, c) })
	t.Run("list changes", func(t *testing.T) { storeListChanges(t, c) })
	t.Run("redis down", func(t *testing.T) { storeRedisDown(t, c) }) // last: it stops Redis
}

// storeRedisDown stops Redis mid-run: calls that need no shared state
// keep serving on both replicas, a task-capable call is answered in its
// request, and tasks/get fails saying the store did not answer. Redis
// comes back (empty) and tasks work again, with no replica restarted.
func storeRedisDown(t *testing.T, c *cluster) {
	cl := c.client("Bearer carol")
	id, _ := cl.startTask("slow_compute", map[string]any{"seconds": 0.2})
	c.redis.Stop()
	served := map[string]bool{}
	for i := range 4 {
		r, replica := cl.rpc("tools/call", "greet", map[string]any{"name": "greet", "arguments": map[string]any{"name": fmt.Sprint(i)}})
		if r.Error != nil || !strings.Contains(fmt.Sprint(r.Result["content"]), fmt.Sprintf("Hello, %d!", i)) {
			t.Errorf("greet on %s with Redis down: %+v; want its result", replica, r)
		}
		served[replica] = true
	}
	if len(served) != 2 {
		t.Errorf("with Redis down, calls were served by %v; want both replicas", served)
	}
	r, replica := cl.rpc("tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0.2, "label": "plain"}})
	if r.Error != nil || r.Result["resultType"] == "task" || !strings.Contains(fmt.Sprint(r.Result["content"]), "computed plain") {
		t.Errorf("a task-capable call on %s with Redis down: %+v; want its plain result", replica, r)
	}
	r, replica = cl.rpc("tasks/get", id, map[string]any{"taskId": id})
	if r.Error == nil || !strings.Contains(r.Error.Message, "task store did not answer") {
		t.Errorf("tasks/get on %s with Redis down: %+v; want an error naming the store", replica, r)
	}

	c.redis.Restart()
	// Each replica reconnects on its own, with no restart: wait (bounded)
	// until a task-capable call is a task again on both, then expect no
	// error at all.
	back := map[string]bool{}
	tick := time.NewTicker(50 * time.Millisecond) // polls other processes, as a client does
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for len(back) < 2 {
		r, replica := cl.rpc("tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0.01, "label": "probe"}})
		if r.Error == nil && r.Result["resultType"] == "task" {
			back[replica] = true
			continue
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("30 s after Redis came back, task-capable calls are tasks again only on %v; last answer %+v from %s", back, r, replica)
		}
	}
	var tt taskTally
	for i := range 4 {
		id, runner := cl.startTask("slow_compute", map[string]any{"seconds": 0.2, "label": fmt.Sprint(i)})
		if done := cl.await(id, &tt, "completed", "failed", "cancelled"); done["status"] != "completed" {
			t.Errorf("task %d on %s after Redis came back: %v; want completed", i, runner, done)
		}
	}
	if tt.unknown != 0 || tt.other != 0 {
		t.Errorf("after Redis came back: %d unknown-task and %d other errors; want 0 (first: %s)", tt.unknown, tt.other, tt.firstErr)
	}
}

// storeTasks: 10 tasks polled and 10 cancelled through the balancer, then
// one that keeps working while the replica not running it restarts.
func storeTasks(t *testing.T, c *cluster) {
	cl := c.client("Bearer alice")
	var tt taskTally
	runners := map[string]bool{}
	for i := range 10 {
		id, runner := cl.startTask("slow_compute", map[string]any{"seconds": 0.3, "label": fmt.Sprint(i)})
		runners[runner] = true
		done := cl.await(id, &tt, "completed", "failed", "cancelled")
		if done["status"] != "completed" || !strings.Contains(fmt.Sprint(done["result"]), fmt.Sprintf("computed %d after", i)) {
			t.Errorf("task %d: got %v; want completed with its result", i, done)
		}
	}
	for i := range 10 {
		id, runner := cl.startTask("slow_compute", map[string]any{"seconds": 60})
		runners[runner] = true
		r, replica := cl.rpc("tasks/cancel", id, map[string]any{"taskId": id})
		tt.note(r, "tasks/cancel", replica)
		if end := cl.await(id, &tt, "completed", "failed", "cancelled"); end["status"] != "cancelled" {
			t.Errorf("cancelled task %d: got %v; want cancelled", i, end)
		}
	}
	if len(runners) != 2 {
		t.Errorf("tasks ran on %v; want both replicas", runners)
	}

	// The replica not running a task restarts while it works; every
	// answer before and after comes from the store.
	id, runner := cl.startTask("slow_compute", map[string]any{"seconds": 4, "label": "restart"})
	other := 1 - c.index(runner)
	cl.get(id, &tt)
	c.restart(other)
	done := cl.await(id, &tt, "completed", "failed", "cancelled")
	if done["status"] != "completed" {
		t.Errorf("task across the restart of replica %d: got %v; want completed", other, done)
	}
	// The replica that ran it restarts: the result stays.
	c.restart(c.index(runner))
	for range 4 {
		if got := cl.get(id, &tt); got["status"] != "completed" {
			t.Errorf("finished task after its replica restarted: got %v; want completed", got)
		}
	}
	t.Logf("tasks: %d requests through haproxy, %d unknown task, %d other errors", tt.requests, tt.unknown, tt.other)
	if tt.unknown != 0 || tt.other != 0 {
		t.Errorf("%d unknown-task and %d other errors in %d task requests; want 0 (first: %s)", tt.unknown, tt.other, tt.requests, tt.firstErr)
	}
}

// storeElicitingTasks: 5 tasks that ask for confirmation inside the
// task; the answer (tasks/update) lands on either replica, and each
// completes with it.
func storeElicitingTasks(t *testing.T, c *cluster) {
	cl := c.client("Bearer bob")
	var tt taskTally
	completed := 0
	for i := range 5 {
		file := fmt.Sprintf("file-%d.txt", i)
		id, _ := cl.startTask("confirm_delete", map[string]any{"filename": file})
		asking := cl.await(id, &tt, "input_required", "completed", "failed", "cancelled")
		reqs, _ := asking["inputRequests"].(map[string]any)
		if asking["status"] != "input_required" || len(reqs) != 1 {
			t.Fatalf("eliciting task %d: got %v; want input_required with one request", i, asking)
		}
		answers := map[string]any{}
		for k := range reqs {
			answers[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
		}
		r, replica := cl.rpc("tasks/update", id, map[string]any{"taskId": id, "inputResponses": answers})
		tt.note(r, "tasks/update", replica)
		done := cl.await(id, &tt, "completed", "failed", "cancelled")
		if done["status"] == "completed" && strings.Contains(fmt.Sprint(done["result"]), "deleted "+file) {
			completed++
		} else {
			t.Errorf("eliciting task %d: got %v; want completed, deleted %s", i, done, file)
		}
	}
	t.Logf("eliciting tasks: %d/5 completed; %d requests, %d unknown, %d other errors", completed, tt.requests, tt.unknown, tt.other)
	if tt.unknown != 0 || tt.other != 0 {
		t.Errorf("eliciting tasks: %d unknown-task and %d other errors; want 0 (first: %s)", tt.unknown, tt.other, tt.firstErr)
	}
}

// storeListChanges: the Go SDK's 2026-07-28 listen stream sits on one
// replica; a reload of the other reaches it. Then both replicas get the
// drop-in (as a config rollout reaches every pod) and list it, and a
// 2025-11-25 session hears its own replica's reload.
func storeListChanges(t *testing.T, c *cluster) {
	ctx := context.Background()
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas-store", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.lb + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect through haproxy: %v", err)
	}
	defer cs.Close()
	changed25 := make(chan struct{}, 16)
	old := mcp.NewClient(&mcp.Implementation{Name: "replicas-store-2025", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed25 <- struct{}{} },
	})
	sticky := &replicaRecorder{next: http.DefaultTransport}
	cs25, err := old.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.lb + "/mcp", HTTPClient: &http.Client{Transport: sticky}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("2025-11-25 connect through haproxy: %v", err)
	}
	defer cs25.Close()
	if _, err := cs25.ListTools(ctx, nil); err != nil { // its GET stream is open once a request went through
		t.Fatal(err)
	}

	held := listenerReplica(t, c.reps[:])
	c.dropIn(1-held, "extra", wasmPlugin("extra", []string{"x"}, nil, nil))
	select {
	case <-changed:
	case <-time.After(noteTimeout):
		t.Fatalf("the listener on replica %d heard nothing of replica %d's reload", held, 1-held)
	}

	c.dropIn(held, "extra", wasmPlugin("extra", []string{"x"}, nil, nil))
	select {
	case <-changed: // the listener's own replica reloaded: both list it now
	case <-time.After(noteTimeout):
		t.Fatalf("the listener on replica %d heard nothing of its own reload", held)
	}
	select {
	case <-changed25:
	case <-time.After(noteTimeout):
		t.Fatal("the 2025-11-25 session heard nothing of its replica's reload")
	}
	// Both replicas list the new tool (lists alternate between them).
	for range 4 {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "extra_x" }) {
			t.Errorf("a tools/list through haproxy lacks extra_x after both replicas reloaded")
		}
	}
}
