package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/plugins/store"
)

// TestKVCounterReplicas runs examples/counter on two replicas (two
// loaders, each with its own handle on one Redis) and calls them in turn:
// the count goes 1…N across both, and on from N on a third replica that
// starts later (a restart). Counters past kv_max_keys are refused, naming
// the key. With Redis stopped the count is an isError result that names
// the store; once Redis is back, the same replicas count again without a
// restart.
func TestKVCounterReplicas(t *testing.T) {
	needGo(t)
	if raceEnabled {
		t.Skip("compiling a Go guest takes about 30 s under -race; TestKVHostFunc covers the sandbox path")
	}
	ctx := t.Context()
	built, err := source.BuildGo(ctx, "../examples/counter", source.BuildOptions{CacheDir: filepath.Join(t.TempDir(), "build")})
	if err != nil {
		t.Fatalf("BuildGo: %v", err)
	}
	wasm, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	replica, call, callArgs, srv, name := kvReplicas(t, "counter", wasm, "kv_max_keys = 4\n")
	a, b := replica(), replica()
	for i := 1; i <= 10; i++ {
		g := []*Generation{a, b}[i%2]
		if res := call(g, "counter_count"); res.IsError || res.Content[0].Text != fmt.Sprint(i) {
			t.Fatalf("count %d on replica %d: %+v; want %d", i, i%2, res, i)
		}
	}
	c := replica() // a restart: a new host on the same Redis
	if res := call(c, "counter_count"); res.Content[0].Text != "11" {
		t.Errorf("count on a restarted replica: %+v; want 11", res)
	}
	for i := 1; i <= 4; i++ { // "default" and n1-n3 fill kv_max_keys = 4
		if res := callArgs(a, "counter_count", fmt.Sprintf(`{"name":"n%d"}`, i)); res.IsError != (i == 4) {
			t.Errorf("counter %d of kv_max_keys = 4: %+v", i+1, res)
		} else if i == 4 && !strings.Contains(res.Content[0].Text, "kv_max_keys") {
			t.Errorf("over the quota: %q; want it to name kv_max_keys", res.Content[0].Text)
		}
	}

	srv.Stop()
	res := call(a, "counter_count")
	if !res.IsError || !strings.Contains(res.Content[0].Text, name) || !strings.Contains(res.Content[0].Text, "store unavailable") {
		t.Errorf("count with Redis down: %+v; want an isError result naming %s", res, name)
	}
	srv.Restart() // empty: the count starts again
	for i, g := range []*Generation{b, a} {
		if res := call(g, "counter_count"); res.IsError || res.Content[0].Text != fmt.Sprint(i+1) {
			t.Errorf("count %d after Redis restarted: %+v; want %d", i+1, res, i+1)
		}
	}
}

// kvReplicas serves wasm as plugin name (its [[plugin]] table given
// extra) on replicas that share one Redis: replica starts one, call and
// callArgs call a tool on one.
func kvReplicas(t *testing.T, name string, wasm []byte, extra string) (replica func() *Generation,
	call func(g *Generation, tool string) abi.CallToolResult, callArgs func(g *Generation, tool, args string) abi.CallToolResult,
	srv *redistest.Server, storeName string) {
	ctx := t.Context()
	dir := t.TempDir()
	write(t, filepath.Join(dir, name+".wasm"), string(wasm))
	file := filepath.Join(dir, "plugins.toml")
	write(t, file, fmt.Sprintf("[server]\nmemory = \"64MiB\"\nmax_instances = 1\n\n[[plugin]]\nname = %q\npath = \"%s.wasm\"\n%s", name, name, extra))
	cfg, err := config.LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	engine := newEngine(t)
	srv = redistest.Start(t)
	storeName = "store " + store.Redact(srv.URL())
	replica = func() *Generation {
		st, err := store.Open(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		l := NewLoader(LoaderOptions{Engine: engine, Logger: discard(), Store: st, StoreName: storeName})
		g, err := l.Build(ctx, cfg, nil)
		if err != nil || len(g.Failures) > 0 {
			t.Fatalf("Build: %v %v", err, g.Failures)
		}
		t.Cleanup(func() { g.Close(context.WithoutCancel(ctx)) })
		return g
	}
	callArgs = func(g *Generation, tool, args string) abi.CallToolResult {
		t.Helper()
		out, err := g.Tool(tool).Run(ctx, nil, json.RawMessage(args), abi.Context{})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var res abi.CallToolResult
		if err := json.Unmarshal(out, &res); err != nil || len(res.Content) == 0 {
			t.Fatalf("%s: %s: %v", tool, out, err)
		}
		return res
	}
	call = func(g *Generation, tool string) abi.CallToolResult { t.Helper(); return callArgs(g, tool, `{}`) }
	return replica, call, callArgs, srv, storeName
}

// TestKVComponentReplicas: the C component kvcount counts through
// wasi:keyvalue on two replicas sharing Redis, 1…N, and on from N on a
// replica started later; with Redis stopped the count fails naming the
// store while a call that touches no state serves, and it counts again
// once Redis is back.
func TestKVComponentReplicas(t *testing.T) {
	replica, _, callArgs, srv, name := kvReplicas(t, "kvcount", componentWasm(t, "kvcount"), "")
	a, b := replica(), replica()
	for i := 1; i <= 6; i++ {
		if res := callArgs([]*Generation{a, b}[i%2], "kvcount_count", `{"key":"n"}`); res.IsError || res.Content[0].Text != fmt.Sprint(i) {
			t.Fatalf("count %d: %+v; want %d", i, res, i)
		}
	}
	if res := callArgs(replica(), "kvcount_count", `{"key":"n"}`); res.Content[0].Text != "7" {
		t.Errorf("count on a restarted replica: %+v; want 7", res)
	}
	srv.Stop()
	if res := callArgs(a, "kvcount_count", `{"key":"n"}`); !res.IsError || !strings.Contains(res.Content[0].Text, name) {
		t.Errorf("count with Redis down: %+v; want an error naming %s", res, name)
	}
	// A call that needs no shared state serves (open reads nothing).
	if res := callArgs(a, "kvcount_open-store", `{"name":"default"}`); res.IsError || res.Content[0].Text != "opened" {
		t.Errorf("a call without state, Redis down: %+v; want it served", res)
	}
	srv.Restart()
	if res := callArgs(b, "kvcount_count", `{"key":"n"}`); res.IsError || res.Content[0].Text != "1" {
		t.Errorf("count after Redis restarted: %+v; want 1", res)
	}
}
