package tasks

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins/store"
)

// call is a Call whose attempt reports progress, then waits for release
// or its context, as a long tool does; the host's seam is taskcall.go.
type call struct {
	release  chan struct{}
	progress chan struct{} // closed once progress was reported
	notified chan string   // methods sent to the request
}

func newCall() *call {
	return &call{release: make(chan struct{}), progress: make(chan struct{}), notified: make(chan string, 8)}
}

func (c *call) Owner() string                           { return "conn:1" }
func (c *call) Tool() (string, string)                  { return "job_work", "job" }
func (c *call) Responses() map[string]json.RawMessage   { return nil }
func (c *call) NotifyListeners(string, json.RawMessage) {}

func (c *call) NotifyRequest(_ context.Context, method string, _ json.RawMessage) error {
	c.notified <- method
	return nil
}

func (c *call) Attempt(ctx context.Context, n *Notifier, _ map[string]json.RawMessage) Attempt {
	n.Notify(ctx, "notifications/message", json.RawMessage(`{"level":"info","data":"before"}`))
	n.Notify(ctx, "notifications/progress", json.RawMessage(`{"progressToken":"task-`+n.ID()+`","progress":1,"message":"step 1"}`))
	close(c.progress)
	select {
	case <-c.release:
		return attempt{res: json.RawMessage(`{"content":[]}`)}
	case <-ctx.Done():
		return attempt{err: ctx.Err()}
	}
}

type attempt struct {
	res any
	err error
}

func (a attempt) Outcome() (any, error)             { return a.res, a.err }
func (a attempt) Asked() map[string]json.RawMessage { return nil }
func (a attempt) Keep()                             {}
func (a attempt) Final() (any, error)               { return a.res, a.err }

// TestStoreLifecycle drives a Store through its seam alone: progress
// makes the call a task (a notification before it still reaches the
// request), tasks/get shows it to its owner only, and it completes; a
// second task is cancelled and its call's context ends.
func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	ts := New(Config{Store: store.NewMemory(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer ts.Close()
	start := func() (*call, string) {
		t.Helper()
		c := newCall()
		res, err := ts.Run(ctx, c, func() {})
		raw, _ := res.(json.RawMessage)
		var v struct{ ResultType, TaskID string }
		if err != nil || json.Unmarshal(raw, &v) != nil || v.ResultType != "task" || v.TaskID == "" {
			t.Fatalf("Run = %s, %v; want a CreateTaskResult", raw, err)
		}
		<-c.progress // its statusMessage is stored
		return c, v.TaskID
	}
	status := func(id string) string {
		t.Helper()
		raw, plugin, err := ts.Get(ctx, "conn:1", id)
		if err != nil || plugin != "job" {
			t.Fatalf("Get(%s) = %s, %q, %v; want the task of plugin job", id, raw, plugin, err)
		}
		var v struct{ Status, StatusMessage string }
		json.Unmarshal(raw, &v)
		return v.Status + " " + v.StatusMessage
	}

	c, id := start()
	if got := <-c.notified; got != "notifications/message" {
		t.Errorf("notification before the task: got %s; want it sent to the request", got)
	}
	if got := status(id); got != "working step 1" {
		t.Errorf("task after progress: got %q; want working, step 1", got)
	}
	if _, _, err := ts.Get(ctx, "conn:2", id); err == nil || !strings.Contains(err.Error(), "unknown task") {
		t.Errorf("another owner's Get: %v; want unknown task", err)
	}
	close(c.release)
	ts.Wait()
	if got := status(id); got != "completed " {
		t.Errorf("after the call returned: got %q; want completed", got)
	}

	_, id = start()
	if err := ts.Cancel(ctx, "conn:1", id); err != nil {
		t.Fatal(err)
	}
	ts.Wait() // the call's context ended, or Wait would not return
	if got := status(id); got != "cancelled cancelled by the client" {
		t.Errorf("after Cancel: got %q; want cancelled", got)
	}
}

// orderStore is a store that logs, in order, the keys it deletes and the
// task records it writes as completed.
type orderStore struct {
	store.Store
	mu  sync.Mutex
	ops []string
}

func (s *orderStore) log(op string) {
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.mu.Unlock()
}

func (s *orderStore) Delete(ctx context.Context, key string) (bool, error) {
	s.log("delete " + key)
	return s.Store.Delete(ctx, key)
}

func (s *orderStore) CompareAndSwap(ctx context.Context, key string, old, next []byte, ttl time.Duration) (bool, error) {
	if strings.Contains(string(next), `"status":"completed"`) {
		s.log("completed " + key)
	}
	return s.Store.CompareAndSwap(ctx, key, old, next, ttl)
}

// TestEvictedBeforeFinished: when a task's result evicts an older one
// (MaxBytes), the older record is deleted before the newer is stored as
// completed, so that a client that sees the newer finished, as tasks/get
// reads it from the store, finds the older gone (under load the deletion
// used to come after, and tasks/get still found the evicted task).
func TestEvictedBeforeFinished(t *testing.T) {
	ctx := context.Background()
	st := &orderStore{Store: store.NewMemory()}
	ts := New(Config{Store: st, MaxBytes: 20, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer ts.Close()
	var ids []string
	for range 2 { // each result is 14 bytes: the second evicts the first
		c := newCall()
		res, err := ts.Run(ctx, c, func() {})
		var v struct{ TaskID string }
		if raw, _ := res.(json.RawMessage); err != nil || json.Unmarshal(raw, &v) != nil || v.TaskID == "" {
			t.Fatalf("Run = %v, %v; want a task", res, err)
		}
		<-c.progress
		close(c.release)
		ts.Wait()
		ids = append(ids, v.TaskID)
	}
	if _, _, err := ts.Get(ctx, "conn:1", ids[0]); err == nil || !strings.Contains(err.Error(), "unknown task") {
		t.Errorf("the evicted task's Get: %v; want unknown task", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	deleted, finished := slices.Index(st.ops, "delete "+taskKey(ids[0])), slices.Index(st.ops, "completed "+taskKey(ids[1]))
	if deleted < 0 || finished < 0 || deleted > finished {
		t.Errorf("store operations %q: want the first task's record deleted before the second's is stored as completed", st.ops)
	}
}
