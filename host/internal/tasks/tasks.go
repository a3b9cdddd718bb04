package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins/store"
)

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663), defined
// for the stateless era only. A tool whose execution.taskSupport is
// "optional" or "required", called by a client that declares the
// extension in its request's capabilities, runs as a task:
//
//  1. The call starts in the request, on a goroutine owned by the task
//     store. Input it asks for before it becomes a task is gathered with
//     the request's own input_required rounds (host's inputrequired.go),
//     as SEP-2663 advises.
//  2. It becomes a task when it first reports progress, or when
//     Options.TaskAfter passes: the task is stored, then the request is
//     answered with a CreateTaskResult (resultType "task"). A call that
//     finishes first is answered as usual (the immediate-result shortcut).
//  3. The client polls tasks/get. Progress shows as statusMessage. Input
//     the task asks for is surfaced as inputRequests (status
//     input_required); when tasks/update has answered every outstanding
//     key the plugin runs again with the answers, as host's inputrequired.go
//     re-runs it.
//  4. tasks/cancel cancels the call's context, which stops the Wasm call.
//
// Tasks are bound to the requester (Call.Owner): another client gets the
// same -32602 as for an unknown id. Finished tasks are kept until their
// TTL, and the oldest are evicted first when their results exceed
// Options.TaskMaxBytes.

// Extension is the extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// Task statuses.
const (
	taskWorking   = "working"
	taskInput     = "input_required"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// Defaults of the task options.
const (
	defaultTaskTTL      = 30 * time.Minute
	defaultTaskMaxBytes = 64 << 20
	defaultTaskAfter    = time.Second
	taskPollInterval    = 500 * time.Millisecond
	taskOverhead        = 512 // bytes counted per task besides its result
)

// Phases of a job.
const (
	phaseRequest   = iota // still answering its request
	phaseTask             // a task: the request got a CreateTaskResult
	phaseSync             // finished in its request, never a task
	phaseAbandoned        // its request ended before either
)

// Store runs the tasks of one host.Server and keeps them in its store
// (share.go), where every replica reads them.
type Store struct {
	ttl      time.Duration
	maxBytes int64
	after    time.Duration
	log      *slog.Logger
	st       store.Store
	replica  string // this process, as the records and channels name it

	mu      sync.Mutex
	jobs    map[string]*job // tasks this replica created (phaseTask), by id
	live    map[*job]bool   // calls running, tasks or not
	bytes   int64           // sum of the created tasks' sizes
	evicted []string        // ids evicted under mu, to delete from the store after
	wg      sync.WaitGroup  // running calls
	done    bool            // closed: no new calls

	shareMu    sync.Mutex
	stopShared func() // ends the subscription and announcements; nil until the first task
}

// Config is what a Store is made with: host.Options' task settings (zero
// means the default), the store replicas share, and the server's logger.
type Config struct {
	TTL      time.Duration // Options.TaskTTL
	MaxBytes int64         // Options.TaskMaxBytes
	After    time.Duration // Options.TaskAfter
	Store    store.Store
	Log      *slog.Logger
}

// New returns the Store of one server, with a replica id of its own.
func New(c Config) *Store {
	ts := &Store{ttl: c.TTL, maxBytes: c.MaxBytes, after: c.After, log: c.Log, jobs: map[string]*job{}, live: map[*job]bool{},
		st: c.Store, replica: newTaskID()}
	if ts.ttl <= 0 {
		ts.ttl = defaultTaskTTL
	}
	if ts.maxBytes <= 0 {
		ts.maxBytes = defaultTaskMaxBytes
	}
	if ts.after <= 0 {
		ts.after = defaultTaskAfter
	}
	return ts
}

// Replica is this process as the task records and the store's channels
// name it; host's list sharing names its messages with it too.
func (ts *Store) Replica() string { return ts.replica }

// job is one task-capable call. Its fields below mu are guarded by the
// store's mu.
type job struct {
	id, owner, tool string
	plugin          string // the tool's, for the audit record of tasks/get
	created         time.Time
	cancel          context.CancelFunc
	escalated       chan struct{} // closed on becoming a task
	syncDone        chan outcome  // the result when it finished in its request
	wake            chan struct{} // every outstanding input was answered, or cancelled
	seed            []byte        // the task as created: the CreateTaskResult's fields
	escMu           sync.Mutex    // one escalation at a time
	noTask          bool          // the store refused the task: the call stays in its request

	phase     int
	rev       int64 // counts changes, for the store (taskRecord.Rev)
	status    string
	message   string
	updated   time.Time
	result    json.RawMessage // completed
	rpcErr    json.RawMessage // failed
	asked     map[string]json.RawMessage
	responses map[string]json.RawMessage
	size      int64
}

type outcome struct {
	res any
	err error
}

func (j *job) terminal() bool {
	return j.status == taskCompleted || j.status == taskFailed || j.status == taskCancelled
}

// Call is what the Store needs of the host for one task-capable
// tools/call: who asks, which tool, and the request it answers.
type Call interface {
	// Owner is who the task belongs to; tasks/* of another owner find no
	// task.
	Owner() string
	// Tool names the tool and its plugin, for the record.
	Tool() (name, plugin string)
	// Responses are the input answers the request brought.
	Responses() map[string]json.RawMessage
	// Attempt runs the tool once, with the answers known so far; n is
	// the Notify of the run's plugins.Peer.
	Attempt(ctx context.Context, n *Notifier, responses map[string]json.RawMessage) Attempt
	// NotifyRequest sends a notification to the request, before the call
	// becomes a task; NotifyListeners to the subscriptions/listen
	// listeners, after.
	NotifyRequest(ctx context.Context, method string, params json.RawMessage) error
	NotifyListeners(method string, params json.RawMessage)
}

// Attempt is one run of a call's tool.
type Attempt interface {
	// Outcome is what the request answers when the call finished in it.
	Outcome() (any, error)
	// Asked is the input the run asked for and the answers did not hold.
	Asked() map[string]json.RawMessage
	// Keep hands the run's input round to the request (the call finished
	// in its request, which may answer input_required). It is called
	// with the Store's lock held.
	Keep()
	// Final is what a task ends with when the run asked nothing.
	Final() (any, error)
}

// Run runs a tool call that may become a task and answers its request:
// with a CreateTaskResult once it is one, or as a plain call. release
// (the registry generation the call runs in) is called when the call
// ends.
func (ts *Store) Run(ctx context.Context, c Call, release func()) (any, error) {
	now := time.Now()
	tool, plugin := c.Tool()
	j := &job{id: newTaskID(), owner: c.Owner(), tool: tool, plugin: plugin, created: now, updated: now,
		escalated: make(chan struct{}), syncDone: make(chan outcome, 1), wake: make(chan struct{}, 1),
		status: taskWorking, asked: map[string]json.RawMessage{}, responses: map[string]json.RawMessage{}}
	for k, v := range c.Responses() {
		j.responses[k] = v
	}
	// The call outlives its request once it is a task: its context keeps
	// the request's values but not its cancellation, and ends with the
	// task's TTL (a task waiting for input forever is cancelled then).
	jctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), now.Add(ts.ttl))
	j.cancel = cancel
	ts.mu.Lock()
	if ts.done {
		ts.mu.Unlock()
		cancel()
		release()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternal, "server is shutting down")
	}
	ts.wg.Add(1)
	ts.live[j] = true
	ts.mu.Unlock()
	go func() {
		defer ts.wg.Done()
		defer release()
		defer cancel()
		ts.run(jctx, c, j)
		ts.mu.Lock()
		delete(ts.live, j)
		ts.mu.Unlock()
	}()

	timer := time.NewTimer(ts.after)
	defer timer.Stop()
	select {
	case <-j.escalated:
	case o := <-j.syncDone:
		return o.res, o.err
	case <-timer.C:
		if !ts.escalate(ctx, j) {
			o := <-j.syncDone
			return o.res, o.err
		}
	case <-ctx.Done():
		ts.mu.Lock()
		abandoned := j.phase == phaseRequest
		if abandoned {
			j.phase = phaseAbandoned
		}
		ts.mu.Unlock()
		if abandoned {
			cancel()
			return nil, ctx.Err()
		}
	}
	return json.RawMessage(append(append([]byte(`{"resultType":"task",`), j.seed[1:len(j.seed)-1]...), '}')), nil
}

// escalate turns a job still in its request into a task, stored (so any
// replica finds it) before the request is answered, and reports whether
// it did. When the store cannot take it, the call stays in its request
// and is answered as a plain call, which needs no shared state.
func (ts *Store) escalate(ctx context.Context, j *job) bool {
	j.escMu.Lock()
	defer j.escMu.Unlock()
	ts.mu.Lock()
	if j.phase != phaseRequest || j.noTask {
		isTask := j.phase == phaseTask
		ts.mu.Unlock()
		return isTask
	}
	j.rev++
	snap := ts.recordLocked(j)
	ts.mu.Unlock()

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	err := ts.startShared(sctx)
	if err == nil {
		// Announced again first: after a Redis restart the announcement
		// is gone until KeepAlive's next tick, and a peer must not take
		// this task's runner for dead.
		err = store.Announce(sctx, ts.st, ts.replica, replicaTTL)
	}
	if err == nil {
		_, _, err = ts.save(sctx, snap, true)
	}
	ts.mu.Lock()
	if err != nil {
		j.noTask = true
		ts.mu.Unlock()
		ts.log.Error("task not created: the store did not take it; the call answers in its request", "tool", j.tool, "err", err)
		return false
	}
	if j.phase != phaseRequest {
		// It finished (or its request ended) while the record was
		// written: the request answers, and the record goes.
		ts.mu.Unlock()
		if _, err := ts.st.Delete(sctx, taskKey(j.id)); err != nil {
			ts.log.Warn("record of a call that never became a task not deleted; it expires with its ttl", "task", j.id, "err", err)
		}
		return false
	}
	j.phase = phaseTask
	j.size = taskOverhead
	ts.jobs[j.id] = j
	ts.bytes += j.size
	ts.sweepLocked(time.Now())
	j.seed = appendTask(nil, snap, ts.ttl, false)
	close(j.escalated)
	ts.mu.Unlock()
	ts.dropEvicted(sctx)
	ts.log.Info("task created", "task", j.id, "tool", j.tool)
	return true
}

// run runs the call, again after each round of input, until it is done.
func (ts *Store) run(ctx context.Context, c Call, j *job) {
	for {
		ts.mu.Lock()
		responses := maps.Clone(j.responses)
		ts.mu.Unlock()
		a := c.Attempt(ctx, &Notifier{ts: ts, j: j, c: c}, responses)
		res, rerr := a.Outcome()
		asked := a.Asked()
		ts.mu.Lock()
		if j.phase != phaseTask {
			// Finished in its request: the request answers, input_required
			// included (invoke reads the request's round).
			if j.phase == phaseRequest {
				j.phase = phaseSync
				a.Keep()
				j.syncDone <- outcome{res, rerr}
			}
			ts.mu.Unlock()
			return
		}
		if j.terminal() {
			ts.mu.Unlock()
			return
		}
		if len(asked) > 0 {
			for k, v := range asked {
				if _, ok := j.responses[k]; !ok {
					j.asked[k] = v
				}
			}
			ts.setStatus(j, taskInput, "waiting for the client's input")
			ts.mu.Unlock()
			ts.persist(ctx, j)
			if !ts.awaitInput(ctx, j) {
				ts.finish(j, nil, ctx.Err())
				return
			}
			continue
		}
		ts.mu.Unlock()
		res, rerr = a.Final()
		if rerr == nil && ctx.Err() != nil {
			rerr = ctx.Err()
		}
		ts.finish(j, res, rerr)
		return
	}
}

// finish records a task's end: completed with the call's result (an
// isError result included), failed with a JSON-RPC error, and stores it.
// A cancelled task stays cancelled. The records of the tasks its result
// evicted are deleted first: whoever sees it finished finds them gone.
func (ts *Store) finish(j *job, res any, err error) {
	ts.mu.Lock()
	changed := ts.finishLocked(j, res, err)
	ts.mu.Unlock()
	ts.dropEvicted(context.Background())
	if changed {
		ts.persist(context.Background(), j)
	}
}

func (ts *Store) finishLocked(j *job, res any, err error) bool {
	if j.terminal() {
		return false
	}
	if errors.Is(err, context.Canceled) && ts.done {
		err = jsonrpc.Errorf(jsonrpc.CodeInternal, "the replica running this task shut down before it finished: call the tool again")
	} else if errors.Is(err, context.Canceled) {
		ts.setStatus(j, taskCancelled, "cancelled")
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = jsonrpc.Errorf(jsonrpc.CodeInternal, "task expired: its ttl of %s passed before it finished", ts.ttl)
	}
	if err != nil {
		var re *jsonrpc.Error
		if !errors.As(err, &re) {
			re = jsonrpc.Errorf(jsonrpc.CodeInternal, "%v", err)
		}
		b, _ := json.Marshal(struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data,omitempty"`
		}{re.Code, re.Message, re.Data})
		j.rpcErr = b
		ts.grow(j, int64(len(b)))
		ts.setStatus(j, taskFailed, re.Message)
		return true
	}
	b, merr := jsonrpc.MarshalResult(res)
	if merr != nil {
		return ts.finishLocked(j, nil, merr)
	}
	j.result = b
	ts.grow(j, int64(len(b)))
	ts.setStatus(j, taskCompleted, "")
	return true
}

// awaitInput waits until tasks/update answered every outstanding input
// (reported by a message, or read from the record every inputRecheck in
// case a message was lost), and reports false when ctx ended first.
func (ts *Store) awaitInput(ctx context.Context, j *job) bool {
	tick := time.NewTicker(inputRecheck)
	defer tick.Stop()
	ts.absorb(ctx, j) // answers stored before this replica listened
	for {
		select {
		case <-j.wake:
			return true
		case <-ctx.Done():
			return false
		case <-tick.C:
			ts.absorb(ctx, j)
		}
	}
}

// grow counts n more bytes for j and evicts the oldest finished tasks
// while the store holds more than its limit.
func (ts *Store) grow(j *job, n int64) {
	j.size += n
	ts.bytes += n
	for ts.bytes > ts.maxBytes {
		var oldest *job
		for _, o := range ts.jobs {
			if o.terminal() && o != j && (oldest == nil || o.updated.Before(oldest.updated)) {
				oldest = o
			}
		}
		if oldest == nil {
			return
		}
		ts.evictLocked(oldest, "memory")
	}
}

func (ts *Store) setStatus(j *job, status, msg string) {
	j.status, j.message, j.updated = status, msg, time.Now()
	if status != taskInput {
		j.asked = map[string]json.RawMessage{}
	}
}

// sweepLocked evicts the tasks whose TTL has passed, cancelling those
// still running.
func (ts *Store) sweepLocked(now time.Time) {
	for _, j := range ts.jobs {
		if now.Sub(j.created) > ts.ttl {
			ts.evictLocked(j, "ttl")
		}
	}
}

func (ts *Store) evictLocked(j *job, why string) {
	delete(ts.jobs, j.id)
	ts.evicted = append(ts.evicted, j.id)
	ts.bytes -= j.size
	if !j.terminal() {
		j.status = taskCancelled
		j.cancel()
	}
	ts.log.Info("task evicted", "task", j.id, "tool", j.tool, "reason", why, "bytes", j.size)
}

// dropEvicted deletes from the store the records of the tasks evicted
// under mu.
func (ts *Store) dropEvicted(ctx context.Context) {
	ts.mu.Lock()
	ids := ts.evicted
	ts.evicted = nil
	ts.mu.Unlock()
	for _, id := range ids {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		if _, err := ts.st.Delete(dctx, taskKey(id)); err != nil {
			ts.log.Warn("evicted task's record not deleted; it expires with its ttl", "task", id, "err", err)
		}
		cancel()
	}
}

// Wait blocks until every call running now has ended: a transcript
// test's step is over only when the tasks it started are.
func (ts *Store) Wait() { ts.wg.Wait() }

// Close cancels every call (a task then ends failed, saying its replica
// shut down), waits for them, and stops listening for its tasks.
func (ts *Store) Close() {
	ts.mu.Lock()
	ts.done = true
	for j := range ts.live {
		j.cancel()
	}
	ts.mu.Unlock()
	ts.wg.Wait()
	ts.shareMu.Lock()
	stop := ts.stopShared
	ts.stopShared = func() {}
	ts.shareMu.Unlock()
	if stop != nil {
		stop()
	}
}

// newTaskID returns 128 random bits: ids are unguessable, as SEP-2663
// requires of ids that double as handles.
func newTaskID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// appendTask appends r as a Task object, and with detail the fields of
// its status (result, error, inputRequests) as a DetailedTask.
func appendTask(b []byte, r *taskRecord, ttl time.Duration, detail bool) []byte {
	b = append(b, `{"taskId":`...)
	b = jsonscan.AppendString(b, r.ID)
	b = append(b, `,"status":`...)
	b = jsonscan.AppendString(b, r.Status)
	if r.Message != "" {
		b = append(b, `,"statusMessage":`...)
		b = jsonscan.AppendString(b, r.Message)
	}
	b = append(b, `,"createdAt":`...)
	b = jsonscan.AppendString(b, r.Created.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"lastUpdatedAt":`...)
	b = jsonscan.AppendString(b, r.Updated.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"ttlMs":`...)
	b = strconv.AppendInt(b, ttl.Milliseconds(), 10)
	b = append(b, `,"pollIntervalMs":`...)
	b = strconv.AppendInt(b, taskPollInterval.Milliseconds(), 10)
	if detail {
		switch r.Status {
		case taskCompleted:
			b = append(append(b, `,"result":`...), r.Result...)
		case taskFailed:
			b = append(append(b, `,"error":`...), r.Error...)
		case taskInput:
			asked, _ := json.Marshal(r.Asked)
			if r.Asked == nil {
				asked = []byte("{}")
			}
			b = append(append(b, `,"inputRequests":`...), asked...)
		}
	}
	return append(b, '}')
}

// Notifier is the Notify of a task-capable call's plugins.Peer (host's
// taskPeer; its Request goes to the attempt's input round).
type Notifier struct {
	ts *Store
	j  *job
	c  Call
}

// ID is the task's id, whether or not the call became a task.
func (p *Notifier) ID() string { return p.j.id }

// Notify turns progress into the task's statusMessage (and the call into
// a task). Before that, notifications go to the request as usual; after,
// only list changes and resource updates are sent, to listeners, since
// SEP-2663 defines no other notification for a task.
func (p *Notifier) Notify(ctx context.Context, method string, params json.RawMessage) error {
	if method == "notifications/progress" {
		if params != nil && !jsonscan.Valid(params) {
			return fmt.Errorf("notify %s: params are not valid JSON", method)
		}
		p.ts.escalate(ctx, p.j)
		msg, _ := jsonrpc.Unquote(jsonrpc.Member(params, "message"))
		if msg == "" {
			msg = "progress " + string(jsonrpc.Member(params, "progress"))
			if total := jsonrpc.Member(params, "total"); total != nil {
				msg += "/" + string(total)
			}
		}
		p.ts.mu.Lock()
		working := p.j.status == taskWorking && p.j.phase == phaseTask
		if working {
			p.j.message, p.j.updated = msg, time.Now()
		}
		p.ts.mu.Unlock()
		if working {
			p.ts.persist(ctx, p.j)
		}
		return nil
	}
	p.ts.mu.Lock()
	inRequest := p.j.phase == phaseRequest
	p.ts.mu.Unlock()
	if inRequest {
		return p.c.NotifyRequest(ctx, method, params)
	}
	switch method {
	case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/updated":
		p.c.NotifyListeners(method, params)
	}
	return nil
}

// lookup reads the caller's task from the store; someone else's is as
// unknown as a missing one. A working task whose replica is gone is
// failed first (deadRunner).
func (ts *Store) lookup(ctx context.Context, owner, id string) (*taskRecord, error) {
	ts.mu.Lock()
	ts.sweepLocked(time.Now())
	ts.mu.Unlock()
	ts.dropEvicted(ctx)
	r, err := ts.load(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, jsonrpc.InvalidParams("invalid params: unknown task %q", id)
	case err != nil:
		return nil, storeUnavailable("task "+strconv.Quote(id), err)
	case r.Owner != owner:
		return nil, jsonrpc.InvalidParams("invalid params: unknown task %q", id)
	}
	if r, err = ts.deadRunner(ctx, r); err != nil {
		return nil, storeUnavailable("task "+strconv.Quote(id), err)
	}
	return r, nil
}

// Get serves tasks/get of owner's task id, from the store: any replica
// answers. It returns the DetailedTask and the name of the plugin whose
// tool runs it.
func (ts *Store) Get(ctx context.Context, owner, id string) (task json.RawMessage, plugin string, err error) {
	r, err := ts.lookup(ctx, owner, id)
	if err != nil {
		return nil, "", err
	}
	return json.RawMessage(appendTask(nil, r, ts.ttl, true)), r.Plugin, nil
}

// Update serves tasks/update of owner's task id with raw, the
// inputResponses object: answers to outstanding inputRequests are stored,
// others ignored; the replica running the call hears of them and, once
// none is outstanding, runs the call again.
func (ts *Store) Update(ctx context.Context, owner, id string, raw json.RawMessage) error {
	r, err := ts.lookup(ctx, owner, id)
	if err != nil {
		return err
	}
	if r.Status != taskInput {
		return nil
	}
	took := false
	r, err = ts.modify(ctx, r, func(cur *taskRecord) error {
		if cur.Status != taskInput {
			return errSkip
		}
		took = false
		jsonrpc.EachMember(raw, func(k, v []byte) bool {
			key, _ := jsonrpc.Unquote(append(append([]byte{'"'}, k...), '"'))
			if _, outstanding := cur.Asked[key]; outstanding && jsonrpc.IsObject(v) {
				delete(cur.Asked, key)
				if cur.Responses == nil {
					cur.Responses = map[string]json.RawMessage{}
				}
				cur.Responses[key] = append(json.RawMessage(nil), v...)
				took = true
			}
			return true
		})
		if !took {
			return errSkip
		}
		cur.Updated = time.Now()
		if len(cur.Asked) == 0 {
			cur.Status, cur.Message = taskWorking, "resumed with the client's input"
		}
		return nil
	})
	if err != nil {
		return storeUnavailable("tasks/update", err)
	}
	if took {
		ts.tell(ctx, r, "update")
	}
	return nil
}

// Cancel serves tasks/cancel of owner's task id: the record is cancelled
// at once, and the replica running the call cancels its context, which
// stops its Wasm call. A finished task is acknowledged as is.
func (ts *Store) Cancel(ctx context.Context, owner, id string) error {
	r, err := ts.lookup(ctx, owner, id)
	if err != nil {
		return err
	}
	if r.terminal() {
		return nil
	}
	cancelled := false
	r, err = ts.modify(ctx, r, func(cur *taskRecord) error {
		if cur.terminal() {
			return errSkip
		}
		cur.Status, cur.Message, cur.Updated, cur.Asked = taskCancelled, "cancelled by the client", time.Now(), nil
		cancelled = true
		return nil
	})
	if err != nil {
		return storeUnavailable("tasks/cancel", err)
	}
	if cancelled {
		ts.tell(ctx, r, "cancel")
	}
	return nil
}

// tell publishes op for task r to the replica running it. A message that
// does not arrive is made up for: a cancel by the runner's next write,
// which finds the record cancelled; an update by its periodic read.
func (ts *Store) tell(ctx context.Context, r *taskRecord, op string) {
	b, _ := json.Marshal(taskMessage{Op: op, Task: r.ID})
	if err := ts.st.Publish(ctx, replicaChannel(r.Replica), b); err != nil {
		ts.log.Warn("task message not sent; the replica running it reads the record later", "op", op, "task", r.ID, "replica", r.Replica, "err", err)
	}
}
