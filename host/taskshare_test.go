package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/store"
)

// replicaClient sends stateless requests to one Server as one caller
// (the HTTP transport's principal), as a balancer would forward them.
type replicaClient struct {
	t         *testing.T
	srv       *Server
	principal string
}

func (c replicaClient) call(format string, args ...any) (wire, taskView) {
	c.t.Helper()
	out := make(chanOut, 16)
	conn := c.srv.Connect(out, ConnInfo{ID: "http-test", Stateless: true, Principal: c.principal})
	defer conn.Close()
	conn.Handle(context.Background(), fmt.Appendf(nil, format, args...))
	var w wire
	select {
	case line := <-out:
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			c.t.Fatalf("invalid JSON %q: %v", line, err)
		}
		w.raw = []byte(line)
	case <-time.After(guard):
		c.t.Fatal("no answer")
	}
	var v taskView
	if w.Result != nil {
		if err := json.Unmarshal(w.Result, &v); err != nil {
			c.t.Fatalf("bad result %s: %v", w.raw, err)
		}
	}
	return w, v
}

func (c replicaClient) get(id string) (wire, taskView) {
	c.t.Helper()
	return c.call(`{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":%q,%s}}`, id, tasksCaps)
}

// waitStatus polls tasks/get (a round trip each, bounded) until status.
func (c replicaClient) waitStatus(id, status string) taskView {
	c.t.Helper()
	var last []byte
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); {
		w, v := c.get(id)
		if v.Status == status {
			return v
		}
		last = w.raw
	}
	c.t.Fatalf("task %s never reached %s; last answer %s", id, status, last)
	return taskView{}
}

// unannounced is a replica's handle on the store that, once off, refuses
// Set, by which a replica announces itself (store.Announce) and nothing
// else of the tasks writes: the replica's announcement, once withdrawn,
// stays gone, as when the replica dies, while its calls run on.
type unannounced struct {
	store.Store
	off atomic.Bool
}

func (u *unannounced) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if u.off.Load() {
		return errors.New("announcements stopped by the test")
	}
	return u.Store.Set(ctx, key, value, ttl)
}

// sharedStores gives two handles on one store, as two replicas hold
// them: the in-process one, and a private redis-server.
func sharedStores(t *testing.T) map[string]func(t *testing.T) (store.Store, store.Store) {
	return map[string]func(t *testing.T) (store.Store, store.Store){
		"memory": func(t *testing.T) (store.Store, store.Store) {
			m := store.NewMemory()
			return m, m
		},
		"redis": func(t *testing.T) (store.Store, store.Store) {
			srv := redistest.Start(t)
			open := func() store.Store {
				s, err := store.Open(srv.URL())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			return open(), open()
		},
	}
}

// TestTasksAcrossReplicas: two Servers sharing a store stand for two
// replicas behind a round-robin balancer. A task created on one is
// answered, cancelled and given its input on the other; a task whose
// replica stops announcing itself ends failed with the reason; a
// finished result outlives the replica that ran it; and one shutting
// down fails its running tasks, saying why.
func TestTasksAcrossReplicas(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			sa, sb := open(t)
			jpA, jpB := newJobPlugin(), newJobPlugin()
			quietA := &unannounced{Store: sa}
			a := newTaskServer(t, jpA, Options{Store: quietA})
			b := newTaskServer(t, jpB, Options{Store: sb})
			onA, onB := replicaClient{t, a, "alice"}, replicaClient{t, b, "alice"}
			eve := replicaClient{t, b, "eve"}
			create := func(tool string) string {
				t.Helper()
				w, v := onA.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,%s}}`, tool, tasksCaps)
				if v.ResultType != "task" || v.TaskID == "" {
					t.Fatalf("tools/call %s on A: got %s; want a task", tool, w.raw)
				}
				return v.TaskID
			}

			// Polled on B, finished on A.
			id := create("job_work")
			recv(t, jpA.started, "call started on A")
			if w, v := onB.get(id); v.Status != taskWorking || v.StatusMessage != "step 1" {
				t.Errorf("tasks/get on B: got %s; want working, step 1", w.raw)
			}
			if w, _ := eve.get(id); w.Error == nil || w.Error.Code != -32602 {
				t.Errorf("another caller on B: got %s; want -32602", w.raw)
			}
			jpA.release <- struct{}{}
			if v := onB.waitStatus(id, taskCompleted); v.Result == nil || v.Result.Content[0].Text != "worked" {
				t.Errorf("completed on B: got %+v; want the result", v)
			}
			finished := id

			// Cancelled on B: A's call stops.
			id = create("job_work")
			recv(t, jpA.started, "second call started on A")
			if w, _ := onB.call(`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":%q,%s}}`, id, tasksCaps); w.Error != nil {
				t.Fatalf("tasks/cancel on B: %s", w.raw)
			}
			if err := recv(t, jpA.cancelled, "A's call cancelled from B"); err != context.Canceled {
				t.Errorf("A's call context: %v; want context.Canceled", err)
			}
			onA.waitStatus(id, taskCancelled)

			// Input asked on A, answered on B.
			id = create("job_ask")
			got := onB.waitStatus(id, taskInput)
			if len(got.InputRequests) != 1 {
				t.Fatalf("input_required on B: got %+v; want one request", got.InputRequests)
			}
			onB.call(`{"jsonrpc":"2.0","id":3,"method":"tasks/update","params":{"taskId":%q,"inputResponses":{"elicitation":{"action":"accept","content":{}}},%s}}`, id, tasksCaps)
			if v := onB.waitStatus(id, taskCompleted); v.Result == nil || !strings.Contains(v.Result.Content[0].Text, `"accept"`) {
				t.Errorf("answered on B: got %+v; want the answer in the result", v)
			}

			// A's announcements stop (as when it dies): B fails its task.
			id = create("job_work")
			recv(t, jpA.started, "third call started on A")
			quietA.off.Store(true)
			if err := store.Withdraw(context.Background(), sb, a.tasks.Replica()); err != nil { // as an expired announcement would
				t.Fatal(err)
			}
			v := onB.waitStatus(id, taskFailed)
			if !strings.Contains(v.StatusMessage, "stopped before it finished") {
				t.Errorf("dead replica's task: statusMessage %q; want the reason", v.StatusMessage)
			}
			jpA.release <- struct{}{}

			// A stops: its finished result stays, on B.
			a.Close()
			if v := onB.waitStatus(finished, taskCompleted); v.Result == nil {
				t.Errorf("result after A closed: %+v", v)
			}

			// B shuts down with a task running: failed, saying why.
			onB2 := replicaClient{t, b, "bob"}
			w, v2 := onB2.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job_work",%s}}`, tasksCaps)
			if v2.TaskID == "" {
				t.Fatalf("tools/call on B: %s", w.raw)
			}
			recv(t, jpB.started, "call started on B")
			b.Close()
			c := newTaskServer(t, newJobPlugin(), Options{Store: sa})
			if v := (replicaClient{t, c, "bob"}).waitStatus(v2.TaskID, taskFailed); !strings.Contains(v.StatusMessage, "shut down") {
				t.Errorf("task of a replica that shut down: statusMessage %q; want the reason", v.StatusMessage)
			}
		})
	}
}

// TestListChangesAcrossReplicas: a reload on replica A reaches a
// subscriptions/listen listener on replica B; A's own listener hears it
// once, not again through the store.
func TestListChangesAcrossReplicas(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			sa, sb := open(t)
			regA := loadRegistry(t, newFixture(), "test")
			regB := loadRegistry(t, newFixture(), "test")
			a := New(regA, Options{Logger: quietLog, Store: sa})
			defer a.Close()
			b := New(regB, Options{Logger: quietLog, Store: sb})
			defer b.Close()
			listen := func(srv *Server) chanOut {
				out := make(chanOut, 16)
				conn := srv.Connect(out, ConnInfo{ID: "http-listen", Stateless: true})
				t.Cleanup(conn.Close)
				conn.Handle(context.Background(), fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, meta2026(`{}`)))
				if m := recv(t, out, "acknowledgement"); !strings.Contains(m, "notifications/subscriptions/acknowledged") {
					t.Fatalf("got %s; want the acknowledgement", m)
				}
				return out
			}
			onA, onB := listen(a), listen(b)
			recv(t, a.listsReady, "A following the store")
			recv(t, b.listsReady, "B following the store")
			regA.Swap(context.Background(), buildGeneration(t, config.Spec{Name: "echo", Native: plugins.NativeModule(echoExports())}))
			for who, out := range map[string]chanOut{"A (reloaded)": onA, "B": onB} {
				if m := recv(t, out, "list change on "+who); !strings.Contains(m, "notifications/tools/list_changed") {
					t.Errorf("listener on %s: got %s; want tools/list_changed", who, m)
				}
			}
			// A marker change on B, heard on A, shows A heard its own
			// change once: the marker comes next, not a duplicate.
			regB.Swap(context.Background(), buildGeneration(t, config.Spec{Name: "echo", Native: plugins.NativeModule(echoExports())}))
			recv(t, onB, "B's own change")
			if m := recv(t, onA, "B's change on A"); !strings.Contains(m, "notifications/tools/list_changed") {
				t.Errorf("listener on A after B's change: got %s", m)
			}
			select {
			case m := <-onA:
				t.Errorf("listener on A: an extra message %s", m)
			default:
			}
		})
	}
}

// TestTasksRedisDown: with Redis stopped, a plain call still serves, a
// task-capable call is answered in its request, and tasks/get fails with
// an error that names the store. After Redis comes back empty, the
// replica reconnects by itself, and a task that was running writes its
// record again, so it finishes as a task.
func TestTasksRedisDown(t *testing.T) {
	rs := redistest.Start(t)
	st, err := store.Open(rs.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jp := newJobPlugin()
	srv := newTaskServer(t, jp, Options{Store: st})
	c := replicaClient{t, srv, "alice"}

	_, v := c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job_work",%s}}`, tasksCaps)
	recv(t, jp.started, "call started")
	if v.ResultType != "task" {
		t.Fatalf("tools/call: got %+v; want a task", v)
	}
	rs.Stop()
	if w, v := c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job_quick",%s}}`, tasksCaps); len(v.Content) != 1 || v.Content[0].Text != "quick" {
		t.Errorf("a plain call with Redis down: got %s; want its result", w.raw)
	}
	if w, _ := c.get(v.TaskID); w.Error == nil || !strings.Contains(w.Error.Message, "task store did not answer") {
		t.Errorf("tasks/get with Redis down: got %s; want an error naming the store", w.raw)
	}
	jp2 := newJobPlugin() // its own, so the release below reaches this call
	c2 := replicaClient{t, newTaskServer(t, jp2, Options{Store: st}), "alice"}
	done := make(chan taskView, 1)
	go func() {
		_, v := c2.call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"job_work",%s}}`, tasksCaps)
		done <- v
	}()
	recv(t, jp2.started, "second call started")
	jp2.release <- struct{}{}
	if v := recv(t, done, "second call answered"); v.ResultType == "task" || len(v.Content) != 1 || v.Content[0].Text != "worked" {
		t.Errorf("a task-capable call with Redis down: got %+v; want its plain result", v)
	}

	rs.Restart()
	jp.release <- struct{}{} // the first task finishes: its record is written again
	if v := c.waitStatus(v.TaskID, taskCompleted); v.Result == nil || v.Result.Content[0].Text != "worked" {
		t.Errorf("task after Redis restarted: got %+v; want completed", v)
	}
}
