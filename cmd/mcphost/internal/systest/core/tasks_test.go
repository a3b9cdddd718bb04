package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// TestEndToEndTasks drives the real `mcphost serve --http` and the
// conformance plugin's task-capable slow_compute with 2026-07-28 requests:
// the call becomes a task, tasks/get shows its progress and then its
// result, a caller with other credentials cannot see it, and tasks/cancel
// stops a long one.
func TestEndToEndTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the conformance plugin")
	}
	_, url := systest.ServeHTTP(t, "--config", "../../examples/conformance/plugins.toml", "--no-watch")
	alice := &taskClient{t: t, url: url, auth: "Bearer alice"}
	bob := &taskClient{t: t, url: url, auth: "Bearer bob"}

	created := alice.call("tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1, "label": "e2e"}})
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" || created["status"] != "working" {
		t.Fatalf("tools/call slow_compute: got %v; want a working task", created)
	}
	if got := bob.rpc("tasks/get", id, map[string]any{"taskId": id}); got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("tasks/get by another caller: got %+v; want -32602", got)
	}
	var progress []string
	done := alice.poll(id, func(task map[string]any) {
		if m, _ := task["statusMessage"].(string); task["status"] == "working" && m != "" {
			progress = append(progress, m)
		}
	})
	if len(progress) == 0 || !strings.HasPrefix(progress[len(progress)-1], "working: step") {
		t.Errorf("statusMessages while working: %q; want progress", progress)
	}
	result, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || !strings.Contains(fmt.Sprint(result["content"]), "computed e2e after 1s") {
		t.Errorf("finished task: got %v; want completed with the result", done)
	}

	long := alice.call("tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60}})
	id, _ = long["taskId"].(string)
	if ack := alice.call("tasks/cancel", id, map[string]any{"taskId": id}); ack["resultType"] != "complete" || ack["status"] != nil {
		t.Errorf("tasks/cancel: got %v; want an empty ack", ack)
	}
	if end := alice.poll(id, nil); end["status"] != "cancelled" {
		t.Errorf("cancelled task: got %v; want status cancelled", end)
	}
}

// taskClient sends stateless 2026-07-28 requests declaring the tasks
// extension, with its own Authorization header.
type taskClient struct {
	t         *testing.T
	url, auth string
	n         int64
}

func (c *taskClient) rpc(method, name string, params map[string]any) systest.RPCReply {
	c.t.Helper()
	c.n++
	caps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	r, _ := systest.PostStateless(c.t, c.url, c.auth, c.n, method, name, params, caps)
	return r
}

func (c *taskClient) call(method, name string, params map[string]any) map[string]any {
	c.t.Helper()
	r := c.rpc(method, name, params)
	if r.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, r.Error.Code, r.Error.Message)
	}
	return r.Result
}

// poll sends tasks/get until the task is finished (each a round trip,
// bounded by a deadline), showing every answer to each.
func (c *taskClient) poll(id string, each func(map[string]any)) map[string]any {
	c.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		task := c.call("tasks/get", id, map[string]any{"taskId": id})
		if each != nil {
			each(task)
		}
		switch task["status"] {
		case "completed", "failed", "cancelled":
			return task
		}
	}
	c.t.Fatalf("task %s did not finish", id)
	return nil
}
