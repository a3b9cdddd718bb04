package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// The task statuses of SEP-2663, as the wire spells them.
const (
	taskWorking   = "working"
	taskInput     = "input_required"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// jobPlugin is a fake plugin with task-capable tools: "work" reports
// progress, signals started and waits for release or its context; "ask"
// reports progress then asks for an elicitation; "must" declares
// taskSupport "required"; "quick" is a plain tool.
type jobPlugin struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan error
}

func newJobPlugin() *jobPlugin {
	return &jobPlugin{started: make(chan struct{}, 16), release: make(chan struct{}, 16), cancelled: make(chan error, 16)}
}

func (jp *jobPlugin) exports() map[string]native {
	return map[string]native{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"work","inputSchema":{"type":"object"}},{"name":"ask","inputSchema":{"type":"object"}},` +
				`{"name":"must","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"quick","inputSchema":{"type":"object"}}]}`), nil
		},
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			req, cc := input(in)
			name, _ := jsonrpc.Unquote(jsonrpc.Member(req, "name"))
			peer := sandbox.PeerFrom(ctx)
			progress := func(msg string) error {
				return peer.Notify(ctx, "notifications/progress", json.RawMessage(`{"progressToken":`+string(jsonrpc.Member(cc.Meta, "progressToken"))+`,"progress":1,"message":"`+msg+`"}`))
			}
			switch name {
			case "work", "must":
				if err := progress("step 1"); err != nil {
					return nil, err
				}
				jp.started <- struct{}{}
				select {
				case <-jp.release:
					return text("worked"), nil
				case <-ctx.Done():
					jp.cancelled <- ctx.Err()
					return nil, ctx.Err()
				}
			case "ask":
				if err := progress("asking"); err != nil {
					return nil, err
				}
				r, err := peer.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"ok?","requestedSchema":{"type":"object"}}`))
				if err != nil {
					return nil, err
				}
				return text("answer " + string(r)), nil
			}
			return text("quick"), nil
		},
	}
}

func newTaskServer(t *testing.T, jp *jobPlugin, opts Options) *Server {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "job", Native: plugins.NativeModule(jp.exports()), TaskTools: []string{"work", "ask"}}}
	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(), cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("build plugins: %v %v", err, g.Failures)
	}
	reg := plugins.NewRegistry()
	reg.Swap(context.Background(), g)
	t.Cleanup(func() { reg.Close(context.Background()) })
	if opts.Logger == nil {
		opts.Logger = quietLog
	}
	srv := New(reg, opts)
	t.Cleanup(srv.Close)
	return srv
}

var tasksCaps = meta2026(`{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`)

type taskView struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	StatusMessage string                     `json:"statusMessage"`
	TTLMs         *int64                     `json:"ttlMs"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *struct {
		Content []struct{ Text string } `json:"content"`
	} `json:"result"`
	Content []struct{ Text string } `json:"content"`
}

// call sends a request and returns its response (there are no
// notifications on these connections).
func (c *testClient) call(format string, args ...any) (wire, taskView) {
	c.t.Helper()
	c.send(format, args...)
	w := c.next()
	var v taskView
	if w.Result != nil {
		if err := json.Unmarshal(w.Result, &v); err != nil {
			c.t.Fatalf("bad result %s: %v", w.raw, err)
		}
	}
	return w, v
}

// waitStatus polls tasks/get until the task leaves working (a round trip
// each, bounded by guard).
func (c *testClient) waitStatus(id, status string) taskView {
	c.t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		_, v := c.call(`{"jsonrpc":"2.0","id":"poll","method":"tasks/get","params":{"taskId":%q,%s}}`, id, tasksCaps)
		if v.Status == status {
			return v
		}
	}
	c.t.Fatalf("task %s never reached %s", id, status)
	return taskView{}
}

// TestTaskLifecycle: a task-capable call becomes a task on its first
// progress; tasks/get shows the progress, then the result; another
// connection cannot see it; tasks/cancel stops the call.
func TestTaskLifecycle(t *testing.T) {
	jp := newJobPlugin()
	srv := newTaskServer(t, jp, Options{})
	c := startClient(t, srv)
	other := startClient(t, srv)

	w, v := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job_work",%s}}`, tasksCaps)
	if v.ResultType != "task" || v.TaskID == "" || v.Status != taskWorking || v.TTLMs == nil || v.Result != nil {
		t.Fatalf("tools/call: got %s; want a CreateTaskResult", w.raw)
	}
	recv(t, jp.started, "call started")
	if w, got := c.call(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":%q,%s}}`, v.TaskID, tasksCaps); got.Status != taskWorking || got.StatusMessage != "step 1" || got.ResultType != "complete" {
		t.Errorf("tasks/get: got %s; want working with statusMessage %q", w.raw, "step 1")
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if w, _ := other.call(`{"jsonrpc":"2.0","id":3,"method":%q,"params":{"taskId":%q,%s}}`, m, v.TaskID, tasksCaps); w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s from another connection: got %s; want -32602", m, w.raw)
		}
	}
	jp.release <- struct{}{}
	if got := c.waitStatus(v.TaskID, taskCompleted); got.Result == nil || len(got.Result.Content) != 1 || got.Result.Content[0].Text != "worked" {
		t.Errorf("completed task: got %+v; want result %q", got, "worked")
	}

	_, v = c.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job_work",%s}}`, tasksCaps)
	recv(t, jp.started, "second call started")
	if w, _ := c.call(`{"jsonrpc":"2.0","id":5,"method":"tasks/cancel","params":{"taskId":%q,%s}}`, v.TaskID, tasksCaps); string(w.Result) == "" || strings.Contains(string(w.Result), "status") {
		t.Errorf("tasks/cancel: got %s; want an empty ack", w.raw)
	}
	if err := recv(t, jp.cancelled, "call cancelled"); err != context.Canceled {
		t.Errorf("call's context: got %v; want context.Canceled", err)
	}
	c.waitStatus(v.TaskID, taskCancelled)
}

// TestTaskGating: without the extension a task-capable tool answers in
// the request, a required one is -32021, and so are tasks/*; an unknown
// task is -32602.
func TestTaskGating(t *testing.T) {
	jp := newJobPlugin()
	srv := newTaskServer(t, jp, Options{})
	c := startClient(t, srv)
	plain := meta2026(`{}`)
	tests := []struct {
		name, req string
		code      int    // want this error code, or
		text      string // this tool result
	}{
		{"optional tool without extension", `"method":"tools/call","params":{"name":"job_quick",` + plain + `}`, 0, "quick"},
		{"required tool without extension", `"method":"tools/call","params":{"name":"job_must",` + plain + `}`, codeMissingCapability, ""},
		{"tasks/get without extension", `"method":"tasks/get","params":{"taskId":"x",` + plain + `}`, codeMissingCapability, ""},
		{"tasks/cancel without extension", `"method":"tasks/cancel","params":{"taskId":"x",` + plain + `}`, codeMissingCapability, ""},
		{"unknown task", `"method":"tasks/get","params":{"taskId":"nope",` + tasksCaps + `}`, jsonrpc.CodeInvalidParams, ""},
		{"missing taskId", `"method":"tasks/update","params":{` + tasksCaps + `}`, jsonrpc.CodeInvalidParams, ""},
		{"tasks/result is removed", `"method":"tasks/result","params":{"taskId":"x",` + tasksCaps + `}`, jsonrpc.CodeMethodNotFound, ""},
		{"tasks/list is removed", `"method":"tasks/list","params":{` + tasksCaps + `}`, jsonrpc.CodeMethodNotFound, ""},
	}
	for i, tt := range tests {
		w, v := c.call(`{"jsonrpc":"2.0","id":%d,%s}`, i, tt.req)
		switch {
		case tt.code != 0 && (w.Error == nil || w.Error.Code != tt.code):
			t.Errorf("%s: got %s; want error %d", tt.name, w.raw, tt.code)
		case tt.code == 0 && (len(v.Content) != 1 || v.Content[0].Text != tt.text || v.TaskID != ""):
			t.Errorf("%s: got %s; want the result %q", tt.name, w.raw, tt.text)
		}
	}
}

// TestTaskInput: input asked inside a task surfaces as inputRequests; an
// answer through tasks/update resumes it (the call runs again with it).
func TestTaskInput(t *testing.T) {
	srv := newTaskServer(t, newJobPlugin(), Options{})
	c := startClient(t, srv)
	_, v := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job_ask",%s}}`, tasksCaps)
	if v.ResultType != "task" {
		t.Fatalf("tools/call: got %+v; want a task", v)
	}
	got := c.waitStatus(v.TaskID, taskInput)
	if len(got.InputRequests) != 1 || !strings.Contains(string(got.InputRequests["elicitation"]), `"elicitation/create"`) {
		t.Fatalf("input_required task: got %+v; want one elicitation", got.InputRequests)
	}
	c.call(`{"jsonrpc":"2.0","id":2,"method":"tasks/update","params":{"taskId":%q,"inputResponses":{"nope":{},"elicitation":{"action":"accept","content":{}}},%s}}`, v.TaskID, tasksCaps)
	done := c.waitStatus(v.TaskID, taskCompleted)
	if done.Result == nil || !strings.Contains(done.Result.Content[0].Text, `"accept"`) {
		t.Errorf("completed task: got %+v; want the answer in its result", done)
	}
}

// TestTaskEviction: finished tasks beyond TaskMaxBytes are evicted, the
// oldest first, with a log line.
func TestTaskEviction(t *testing.T) {
	jp := newJobPlugin()
	var logs lockedBuffer
	srv := newTaskServer(t, jp, Options{TaskMaxBytes: 1500, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := startClient(t, srv)
	var ids []string
	for i := range 3 {
		_, v := c.call(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"job_work",%s}}`, i, tasksCaps)
		recv(t, jp.started, "call started")
		jp.release <- struct{}{}
		c.waitStatus(v.TaskID, taskCompleted)
		ids = append(ids, v.TaskID)
	}
	if w, _ := c.call(`{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":%q,%s}}`, ids[0], tasksCaps); w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("oldest task: got %s; want it evicted (-32602)", w.raw)
	}
	if _, v := c.call(`{"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"taskId":%q,%s}}`, ids[2], tasksCaps); v.Status != taskCompleted {
		t.Errorf("newest task: got %+v; want it kept", v)
	}
	if want := fmt.Sprintf(`msg="task evicted" task=%s`, ids[0]); !strings.Contains(string(logs.Bytes()), want) {
		t.Errorf("log: got %q; want a line with %q", logs.Bytes(), want)
	}
}

// TestTaskTTL: a task still running when its TTL passes is cancelled (its
// call's context ends) and evicted.
func TestTaskTTL(t *testing.T) {
	jp := newJobPlugin()
	var logs lockedBuffer
	srv := newTaskServer(t, jp, Options{TaskTTL: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := startClient(t, srv)
	_, v := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job_work",%s}}`, tasksCaps)
	if v.TTLMs == nil || *v.TTLMs != 50 {
		t.Errorf("ttlMs: got %v; want 50", v.TTLMs)
	}
	recv(t, jp.started, "call started")
	if err := recv(t, jp.cancelled, "call ended by its ttl"); err != context.DeadlineExceeded {
		t.Errorf("call's context: got %v; want context.DeadlineExceeded", err)
	}
	if w, _ := c.call(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":%q,%s}}`, v.TaskID, tasksCaps); w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("expired task: got %s; want it evicted (-32602)", w.raw)
	}
	if want := fmt.Sprintf(`msg="task evicted" task=%s tool=job_work reason=ttl`, v.TaskID); !strings.Contains(string(logs.Bytes()), want) {
		t.Errorf("log: got %q; want a line with %q", logs.Bytes(), want)
	}
}

// FuzzTaskParams feeds arbitrary params to tasks/get, tasks/update and
// tasks/cancel: each answers a result or a -32602, never panics.
func FuzzTaskParams(f *testing.F) {
	for _, seed := range []string{`{"taskId":"x"}`, `{"taskId":"x","inputResponses":{"a":{}}}`, `{"taskId":1}`, `{"inputResponses":[]}`, `[]`, `null`, `{"taskId":"\u0000"}`} {
		f.Add([]byte(seed))
	}
	srv := New(plugins.NewRegistry(), Options{Logger: quietLog})
	defer srv.Close()
	s := srv.newSession(nil, "fuzz")
	st := &clientState{version: protocol.Stateless, caps: clientCaps{tasks: true}}
	f.Fuzz(func(t *testing.T, params []byte) {
		for _, m := range []handler{getTask, updateTask, cancelTask} {
			req, ok := withParams(&request{sess: s, method: "tasks/get", state: st}, params)
			if !ok {
				return // every request's params come from a message the codec read
			}
			_, err := m(context.Background(), s, req)
			if re, ok := err.(*jsonrpc.Error); err != nil && (!ok || re.Code != jsonrpc.CodeInvalidParams) {
				t.Errorf("params %q: got %v; want a result or -32602", params, err)
			}
		}
	})
}
