package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins/store"
)

// Tasks in the store. Every task is a record in the shared store under
// "task:<id>", so any replica answers tasks/get, and a finished result
// outlives the replica that ran it. The replica running the call (the
// record's Replica) is the only one that writes its progress, input
// requests and outcome; the others write only what a client asked of
// them: tasks/cancel marks the record cancelled, tasks/update moves the
// answers into Responses. Then they publish to "replica:<id>", the
// channel of the replica running the call, which stops the call or runs
// it again with the answers. A record the runner finds already finished
// (cancelled, or failed because a peer found the runner dead) is never
// overwritten: the runner adopts it. A replica that runs tasks announces
// itself in the store (store.KeepAlive); a peer that finds a working
// task's replica gone ends the task as failed, with the reason.

// taskRecord is a task as the store holds it.
type taskRecord struct {
	ID      string    `json:"id"`
	Owner   string    `json:"owner"`
	Tool    string    `json:"tool"`
	Plugin  string    `json:"plugin"`
	Replica string    `json:"replica"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Rev counts the runner's writes: an older snapshot never replaces a
	// newer one.
	Rev     int64                      `json:"rev"`
	Status  string                     `json:"status"`
	Message string                     `json:"message,omitempty"`
	Result  json.RawMessage            `json:"result,omitempty"`
	Error   json.RawMessage            `json:"error,omitempty"`
	Asked   map[string]json.RawMessage `json:"asked,omitempty"`
	// Responses are the answers tasks/update took, on any replica, for
	// the runner to read.
	Responses map[string]json.RawMessage `json:"responses,omitempty"`
}

func (r *taskRecord) terminal() bool {
	return r.Status == taskCompleted || r.Status == taskFailed || r.Status == taskCancelled
}

func taskKey(id string) string { return "task:" + id }

// replicaChannel is where the replica id hears of cancels and answers
// for the tasks it runs.
func replicaChannel(id string) string { return "replica:" + id }

// taskMessage is what a replica publishes to the runner of a task.
type taskMessage struct {
	Op   string `json:"op"` // "cancel" or "update"
	Task string `json:"task"`
}

const (
	// replicaTTL is how long a replica's announcement lasts: a replica
	// that dies is known dead this long after, at most.
	replicaTTL = 10 * time.Second
	// inputRecheck is how often a task waiting for input reads its record,
	// in case the message that answers arrived while its subscription was
	// reconnecting.
	inputRecheck = 2 * time.Second
	// storeTimeout bounds one store call made for a task.
	storeTimeout = 5 * time.Second
)

// errSkip ends a store.Update without writing.
var errSkip = errors.New("skip")

// storeUnavailable is the error a task request gets when the store
// cannot answer.
func storeUnavailable(what string, err error) error {
	return jsonrpc.Errorf(jsonrpc.CodeInternal, "%s: the task store did not answer; retry: %v", what, err)
}

// recordLocked is j as the store should hold it; ts.mu is held.
func (ts *Store) recordLocked(j *job) *taskRecord {
	r := &taskRecord{ID: j.id, Owner: j.owner, Tool: j.tool, Plugin: j.plugin, Replica: ts.replica, Created: j.created, Updated: j.updated,
		Rev: j.rev, Status: j.status, Message: j.message, Result: j.result, Error: j.rpcErr}
	if len(j.asked) > 0 {
		r.Asked = maps.Clone(j.asked)
	}
	return r
}

// ttlLeft is how long a record created at created still has to live.
func (ts *Store) ttlLeft(created time.Time) time.Duration {
	return time.Until(created.Add(ts.ttl))
}

// save writes the runner's snapshot of a task. It keeps what other
// replicas wrote (Responses; an outcome they decided), never replaces a
// newer snapshot, and returns the record as stored, which the caller
// adopts when it is further along than its own view. A missing record is
// written again only while the task is kept (it vanished with a Redis
// restart), never after it was evicted.
func (ts *Store) save(ctx context.Context, snap *taskRecord, kept bool) (stored *taskRecord, created bool, err error) {
	left := ts.ttlLeft(snap.Created)
	if left <= 0 {
		_, err := ts.st.Delete(ctx, taskKey(snap.ID))
		return nil, false, err
	}
	_, err = store.Update(ctx, ts.st, taskKey(snap.ID), left, func(old []byte) ([]byte, error) {
		next := *snap
		created = old == nil
		next.Asked = maps.Clone(snap.Asked)
		if old != nil {
			var cur taskRecord
			if err := json.Unmarshal(old, &cur); err != nil {
				return nil, fmt.Errorf("task %s: stored record: %w", snap.ID, err)
			}
			if cur.terminal() || cur.Rev >= snap.Rev {
				stored = &cur
				return nil, errSkip
			}
			next.Responses = cur.Responses
		} else if !kept {
			return nil, errSkip // evicted or expired: not brought back
		}
		for k := range next.Responses {
			delete(next.Asked, k)
		}
		if next.Status == taskInput && len(next.Asked) == 0 && len(snap.Asked) > 0 {
			next.Status, next.Message = taskWorking, "resumed with the client's input"
		}
		stored = &next
		return json.Marshal(&next)
	})
	if errors.Is(err, errSkip) {
		return stored, false, nil
	}
	return stored, created, err
}

// load reads a task's record: ErrNotFound when there is none.
func (ts *Store) load(ctx context.Context, id string) (*taskRecord, error) {
	b, err := ts.st.Get(ctx, taskKey(id))
	if err != nil {
		return nil, err
	}
	var r taskRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("task %s: stored record: %w", id, err)
	}
	return &r, nil
}

// modify applies fn to the record of task seen (as last read), as a peer
// does (cancel, update, marking a dead runner's task failed). fn returns
// errSkip to leave it as it is.
func (ts *Store) modify(ctx context.Context, seen *taskRecord, fn func(r *taskRecord) error) (*taskRecord, error) {
	left := ts.ttlLeft(seen.Created)
	if left <= 0 {
		return nil, fmt.Errorf("task %s: %w", seen.ID, store.ErrNotFound)
	}
	var out *taskRecord
	_, err := store.Update(ctx, ts.st, taskKey(seen.ID), left, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, fmt.Errorf("task %s: %w", seen.ID, store.ErrNotFound)
		}
		var r taskRecord
		if err := json.Unmarshal(old, &r); err != nil {
			return nil, fmt.Errorf("task %s: stored record: %w", seen.ID, err)
		}
		out = &r
		if err := fn(&r); err != nil {
			return nil, err
		}
		return json.Marshal(&r)
	})
	if errors.Is(err, errSkip) {
		err = nil
	}
	return out, err
}

// startShared subscribes this replica to its channel and starts
// announcing it, the first time it runs a task. It is retried at the
// next task when it fails.
func (ts *Store) startShared(ctx context.Context) error {
	ts.shareMu.Lock()
	defer ts.shareMu.Unlock()
	if ts.stopShared != nil {
		return nil
	}
	if ts.done {
		return errors.New("server is shutting down")
	}
	sub, err := ts.st.Subscribe(ctx, replicaChannel(ts.replica))
	if err != nil {
		return err
	}
	if err := store.Announce(ctx, ts.st, ts.replica, replicaTTL); err != nil {
		sub.Close()
		return err
	}
	bctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		store.KeepAlive(bctx, ts.st, ts.replica, replicaTTL, func(err error) {
			ts.log.Warn("replica not announced in the store: peers may take its tasks for dead", "replica", ts.replica, "err", err)
		})
	})
	wg.Go(func() { ts.follow(sub) })
	ts.stopShared = func() {
		cancel()
		sub.Close()
		wg.Wait()
	}
	ts.log.Debug("task store shared", "replica", ts.replica)
	return nil
}

// follow handles the messages for this replica's tasks until sub closes.
func (ts *Store) follow(sub store.Subscription) {
	for m := range sub.C() {
		var msg taskMessage
		if err := json.Unmarshal(m.Payload, &msg); err != nil {
			ts.log.Warn("task message ignored: not JSON", "err", err)
			continue
		}
		ts.mu.Lock()
		j := ts.jobs[msg.Task]
		ts.mu.Unlock()
		if j == nil {
			continue // finished or evicted meanwhile
		}
		switch msg.Op {
		case "cancel":
			ts.cancelLocal(j, "cancelled by the client")
		case "update":
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			ts.absorb(ctx, j)
			cancel()
		default:
			ts.log.Warn("task message ignored: unknown op", "op", msg.Op, "task", msg.Task)
		}
	}
}

// cancelLocal stops a task this replica runs.
func (ts *Store) cancelLocal(j *job, why string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if j.terminal() {
		return
	}
	ts.setStatus(j, taskCancelled, why)
	j.cancel()
	ts.log.Info("task cancelled", "task", j.id, "tool", j.tool)
}

// absorb reads the answers tasks/update stored for j (on any replica)
// and runs the call again once none is outstanding. A record that
// another replica finished (cancelled) stops the call.
func (ts *Store) absorb(ctx context.Context, j *job) {
	r, err := ts.load(ctx, j.id)
	if errors.Is(err, store.ErrNotFound) {
		ts.persist(ctx, j) // lost with a Redis restart: written again if still kept
		return
	}
	if err != nil {
		ts.log.Warn("task record not read", "task", j.id, "err", err)
		return
	}
	if r.Status == taskCancelled {
		ts.cancelLocal(j, r.Message)
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if j.status != taskInput {
		return
	}
	for k, v := range r.Responses {
		if _, had := j.responses[k]; !had {
			j.responses[k] = v
		}
		delete(j.asked, k)
	}
	if len(j.asked) > 0 {
		return
	}
	ts.setStatus(j, taskWorking, "resumed with the client's input")
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// persist saves j's current state, outside ts.mu. A record already
// finished by a peer (a cancel whose message was lost) stops the call.
func (ts *Store) persist(ctx context.Context, j *job) {
	ts.mu.Lock()
	if j.phase != phaseTask {
		ts.mu.Unlock()
		return
	}
	j.rev++
	snap := ts.recordLocked(j)
	_, kept := ts.jobs[j.id]
	ts.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	stored, created, err := ts.save(sctx, snap, kept)
	if err == nil && created && snap.Rev > 1 {
		// A record lost with a Redis restart came back: so does the
		// runner's announcement, before KeepAlive's next tick, so that
		// peers do not take the task's runner for dead.
		err = store.Announce(sctx, ts.st, ts.replica, replicaTTL)
	}
	if err != nil {
		ts.log.Error("task state not stored: tasks/get shows an older state until the store answers", "task", j.id, "status", snap.Status, "err", err)
		return
	}
	if stored != nil && stored.terminal() && !snap.terminal() {
		ts.cancelLocal(j, stored.Message)
	}
}

// deadRunner ends a working task whose replica no longer announces
// itself: failed, with the reason, never unknown.
func (ts *Store) deadRunner(ctx context.Context, r *taskRecord) (*taskRecord, error) {
	if r.terminal() || r.Replica == ts.replica {
		return r, nil
	}
	alive, err := store.Alive(ctx, ts.st, r.Replica)
	if err != nil || alive {
		return r, err
	}
	ts.log.Warn("task failed: the replica running it is gone", "task", r.ID, "tool", r.Tool, "replica", r.Replica)
	return ts.modify(ctx, r, func(cur *taskRecord) error {
		if cur.terminal() {
			return errSkip
		}
		msg := fmt.Sprintf("the replica running this task (%s) stopped before it finished; its work is lost: call the tool again", cur.Replica)
		cur.Error, _ = json.Marshal(map[string]any{"code": jsonrpc.CodeInternal, "message": msg})
		cur.Status, cur.Message, cur.Updated, cur.Asked = taskFailed, msg, time.Now(), nil
		return nil
	})
}
