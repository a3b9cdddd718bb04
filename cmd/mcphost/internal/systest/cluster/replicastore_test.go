package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
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
//     a 2025-11-25 session hears its own replica's reload;
//   - a plugin's own add_tool on one replica (the SDK's shared tools) is
//     heard by the other replica's 2025-11-25 sessions and listeners,
//     listed by it and served by it, in both eras (issue 38);
//   - consent: one question for an allow_always, honoured by both
//     replicas, in each era;
//   - examples/counter's KV counter counts 1…N across both replicas.
//
// Tasks go through raw JSON-RPC: the Go SDK (v1.8) has no tasks API.
func TestReplicasStore(t *testing.T) {
	c := startCluster(t, storeConf(t))
	t.Run("tasks", func(t *testing.T) { storeTasks(t, c) })
	t.Run("eliciting tasks", func(t *testing.T) { storeElicitingTasks(t, c) })
	t.Run("list changes", func(t *testing.T) { storeListChanges(t, c) })
	t.Run("plugin tools", func(t *testing.T) { storePluginTools(t, c) })
	t.Run("consent", func(t *testing.T) { storeConsent(t, c) })
	t.Run("kv counter", func(t *testing.T) { storeKVCounter(t, c) })
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
	c.dropIn(1-held, "extra", systest.WasmPlugin("extra", []string{"x"}, nil, nil))
	select {
	case <-changed:
	case <-time.After(systest.NoteTimeout):
		t.Fatalf("the listener on replica %d heard nothing of replica %d's reload", held, 1-held)
	}

	c.dropIn(held, "extra", systest.WasmPlugin("extra", []string{"x"}, nil, nil))
	select {
	case <-changed: // the listener's own replica reloaded: both list it now
	case <-time.After(systest.NoteTimeout):
		t.Fatalf("the listener on replica %d heard nothing of its own reload", held)
	}
	select {
	case <-changed25:
	case <-time.After(systest.NoteTimeout):
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

// storePluginTools: testdata/sharedtools adds a tool at run time on one
// replica (its add_tool, an SDK shared tool). The other replica, which
// holds the 2026-07-28 client's subscriptions/listen and a 2025-11-25
// session, tells both of them, lists the tool and serves a call to it;
// so does every list and call through the balancer. A tool added with
// plain AddTool stays with the instance that added it, as documented.
func storePluginTools(t *testing.T, c *cluster) {
	ctx := t.Context()
	before := listenCounts(t, c.reps[:])
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas-plugin-tools", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.lb + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect through haproxy: %v", err)
	}
	defer cs.Close()
	held := newListener(t, c.reps[:], before)
	adder := 1 - held

	heard := make(chan *mcp.ClientSession, 16)
	old := mcp.NewClient(&mcp.Implementation{Name: "replicas-plugin-tools-2025", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, r *mcp.ToolListChangedRequest) { heard <- r.Session },
	})
	sessions := sdkSessions(t, c, old, "2025-11-25") // [on a, on b]
	for _, s := range sessions {
		if _, err := s.cs.ListTools(ctx, nil); err != nil { // its GET stream is open once a request went through
			t.Fatal(err)
		}
	}
	has := func(tools []*mcp.Tool, name string) bool {
		return slices.ContainsFunc(tools, func(tl *mcp.Tool) bool { return tl.Name == name })
	}
	// awaitListed waits until the 2025-11-25 session on replica i has
	// heard tools/list_changed and then lists tool: a notification that
	// came before the replica re-read its lists is followed by another.
	pending := map[*mcp.ClientSession]int{} // heard, not yet awaited
	awaitListed := func(i int, tool, what string) {
		t.Helper()
		deadline := time.After(systest.NoteTimeout)
		for {
			for pending[sessions[i].cs] == 0 {
				select {
				case s := <-heard:
					pending[s]++
				case <-deadline:
					t.Fatalf("%s: the 2025-11-25 session on replica %d heard no tools/list_changed after which it lists %s", what, i, tool)
				}
			}
			pending[sessions[i].cs]--
			l, err := sessions[i].cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if has(l.Tools, tool) {
				return
			}
		}
	}

	// Names of this run's own: the list cache, shared by runs, may hold
	// the shared tools of an earlier run, which a replica then lists
	// until the plugin's first use re-reads it.
	run := strings.ToLower(rand.Text()[:6])
	shared, local := "greet_"+run, "local_"+run
	res, replica := sessions[adder].call(t, "sharedtools_add_tool", map[string]any{"name": shared, "text": "hello from every replica"})
	if text := systest.TextOf(t, res); res.IsError || text != "added "+shared || c.index(replica) != adder {
		t.Fatalf("add_tool on replica %s: %q (isError %v); want added %s, on replica %d", replica, text, res.IsError, shared, adder)
	}
	// Both replicas' sessions hear of it and list it; the one on the
	// replica that did not run add_tool is the point.
	awaitListed(held, "sharedtools_"+shared, "add_tool on replica "+replica)
	awaitListed(adder, "sharedtools_"+shared, "add_tool on replica "+replica)
	select {
	case <-changed:
	case <-time.After(systest.NoteTimeout):
		t.Fatalf("the 2026-07-28 listener on replica %d heard nothing of add_tool on replica %d", held, adder)
	}
	res, _ = sessions[held].call(t, "sharedtools_"+shared, map[string]any{})
	if text := systest.TextOf(t, res); res.IsError || text != "hello from every replica" {
		t.Errorf("%s on replica %d, which did not add it: %q (isError %v); want its text", shared, held, text, res.IsError)
	}
	// 2026-07-28 requests alternate between the replicas.
	for i := range 4 {
		l, err := cs.ListTools(ctx, nil)
		if err != nil || !has(l.Tools, "sharedtools_"+shared) {
			t.Errorf("2026-07-28 tools/list %d through haproxy: err %v; want %s listed", i, err, shared)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sharedtools_" + shared, Arguments: map[string]any{}})
		if err != nil || res.IsError || systest.TextOf(t, res) != "hello from every replica" {
			t.Errorf("2026-07-28 call %d of %s through haproxy: %v %+v; want its text", i, shared, err, res)
		}
	}

	// Plain AddTool: heard and served where it ran, and nowhere else.
	res, _ = sessions[adder].call(t, "sharedtools_add_local_tool", map[string]any{"name": local, "text": "here only"})
	if text := systest.TextOf(t, res); res.IsError || text != "added "+local {
		t.Fatalf("add_local_tool on replica %d: %q (isError %v)", adder, text, res.IsError)
	}
	awaitListed(adder, "sharedtools_"+local, "add_local_tool")
	l, err := sessions[held].cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if has(l.Tools, "sharedtools_"+local) {
		t.Errorf("replica %d, whose instance did not run add_local_tool, lists %s; want it only on replica %d", held, local, adder)
	}
}

// listenCounts scrapes each replica's count of open 2026-07-28
// subscriptions/listen requests.
func listenCounts(t *testing.T, reps []*systest.Replica) []int {
	t.Helper()
	counts := make([]int, len(reps))
	for i, r := range reps {
		counts[i], _ = strconv.Atoi(systest.ScrapeValue(t, r.Metrics, `mcphost_listeners{era="2026-07-28"}`))
	}
	return counts
}

// newListener polls the replicas' metrics (bounded) until one reports
// more subscriptions/listen requests than before (listenCounts before a
// client connected), and returns its index: where that client listens,
// whatever listeners of earlier clients are still closing.
func newListener(t *testing.T, reps []*systest.Replica, before []int) int {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		for i, n := range listenCounts(t, reps) {
			if n > before[i] {
				return i
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no replica reports the client's subscriptions/listen (mcphost_listeners, %v before it connected)", before)
		}
	}
}

// storeConf is clusterConf plus the fetch example, which may ask for
// 127.0.0.1 (consent), examples/counter (plugin state in the store) and
// testdata/sharedtools (tools a plugin adds at run time).
func storeConf(t *testing.T) string {
	t.Helper()
	var abs [3]string
	for i, dir := range []string{"../../examples/fetch", "../../examples/counter", "testdata/sharedtools"} {
		var err error
		if abs[i], err = filepath.Abs(dir); err != nil {
			t.Fatal(err)
		}
	}
	conf := strings.Replace(clusterConf(t), "[server]\n", "[server]\nstartup_wait = \"180s\"\n", 1)
	return conf + fmt.Sprintf("\n[[plugin]]\nname = \"fetch\"\nsource = %q\ntimeout = \"60s\"\nmay_request_hosts = [\"127.0.0.1\"]\n"+
		"\n[[plugin]]\nname = \"counter\"\nsource = %q\n\n[[plugin]]\nname = \"sharedtools\"\nsource = %q\n", abs[0], abs[1], abs[2])
}

// lbSession is a Go SDK session through the balancer; rec notes the
// replica that answered each request.
type lbSession struct {
	cs  *mcp.ClientSession
	rec *replicaRecorder
}

// sdkSessions connects client through the balancer in version's era and
// returns sessions that, called in turn, reach both replicas: a
// 2026-07-28 session is stateless, so one alternates by itself; a
// 2025-11-25 session sticks to the replica of its initialize, so
// sessions are opened (bounded) until one sits on each replica.
func sdkSessions(t *testing.T, c *cluster, client *mcp.Client, version string) []*lbSession {
	t.Helper()
	connect := func() *lbSession {
		rec := &replicaRecorder{next: http.DefaultTransport}
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: c.lb + "/mcp", HTTPClient: &http.Client{Transport: rec}},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s connect through haproxy: %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		return &lbSession{cs: cs, rec: rec}
	}
	if version != "2025-11-25" {
		return []*lbSession{connect()}
	}
	byReplica := map[string]*lbSession{}
	for range 8 {
		s := connect()
		if reps := s.rec.replicas(); len(reps) == 1 && byReplica[reps[0]] == nil {
			byReplica[reps[0]] = s
		}
		if len(byReplica) == 2 {
			return []*lbSession{byReplica["a"], byReplica["b"]}
		}
	}
	t.Fatalf("8 2025-11-25 sessions through haproxy sat only on %v; want one on each replica", slices.Collect(maps.Keys(byReplica)))
	return nil
}

// call calls tool on s and returns its result and the replica that
// answered it (the retry's, after an input_required round).
func (s *lbSession) call(t *testing.T, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	s.rec.reset()
	res, err := s.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	first, retry := s.rec.round()
	if retry != "" {
		return res, retry
	}
	if first == "" { // a 2025-11-25 session: its replica
		first = strings.Join(s.rec.replicas(), ",")
	}
	return res, first
}

// storeConsent: in each era the fetch example reaches a new loopback
// server (a host it may only ask for). The first call asks once and the
// person answers allow_always; 6 more calls, alternating replicas, all
// succeed with no further question: the grant, kept in the store, is
// honoured by both replicas.
func storeConsent(t *testing.T, c *cluster) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			up := systest.NewUpstream(t)
			p := &systest.Person{}
			p.Say("allow_always") // any further question is denied
			client := mcp.NewClient(&mcp.Implementation{Name: "replicas-consent", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: p.Handle})
			sessions := sdkSessions(t, c, client, version)
			answered := map[string]int{}
			for i := range 7 {
				res, replica := sessions[i%len(sessions)].call(t, "fetch_fetch", map[string]any{"url": fmt.Sprintf("%s/%d", up.URL, i)})
				if text := systest.TextOf(t, res); res.IsError || !strings.Contains(text, "hello from upstream") {
					t.Errorf("call %d on replica %s: %q (isError %v); want the upstream's text", i, replica, text, res.IsError)
				}
				if i > 0 {
					answered[replica]++
				}
			}
			if q := p.Asked(); len(q) != 1 || !strings.Contains(q[0], "127.0.0.1:"+up.Port) || !strings.Contains(q[0], "kept in the server's shared store") {
				t.Errorf("questions asked: %q; want one, about 127.0.0.1:%s, saying the answer is kept in the shared store", q, up.Port)
			}
			if answered["a"] == 0 || answered["b"] == 0 {
				t.Errorf("calls after the grant were answered by %v; want both replicas", answered)
			}
			t.Logf("%s consent: %d question(s); calls after the grant answered by %v", version, len(p.Asked()), answered)
			if n := up.Hits.Load(); n != 7 {
				t.Errorf("the upstream saw %d requests; want 7", n)
			}
		})
	}
}

// storeKVCounter: examples/counter's count, called 10 times in each era
// with the calls alternating replicas, goes 1…10 then 11…20, with no gap
// and no repeat: the count is plugin state in the store, not in either
// replica's memory.
func storeKVCounter(t *testing.T, c *cluster) {
	n := 0
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "replicas-counter", Version: "1"}, nil)
			sessions := sdkSessions(t, c, client, version)
			counted := map[string]int{}
			for i := range 10 {
				n++
				res, replica := sessions[i%len(sessions)].call(t, "counter_count", map[string]any{})
				if text := systest.TextOf(t, res); res.IsError || text != fmt.Sprint(n) {
					t.Fatalf("count %d on replica %s: %q (isError %v); want %d", i+1, replica, text, res.IsError, n)
				}
				counted[replica]++
			}
			t.Logf("%s counter: reached %d; counts answered by %v", version, n, counted)
			if counted["a"] == 0 || counted["b"] == 0 {
				t.Errorf("counts were answered by %v; want both replicas", counted)
			}
		})
	}
}
