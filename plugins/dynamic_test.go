package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// dynPlugin is a native plugin whose tool list grows and shrinks at run
// time, as a hyper-mcp plugin's may: "add" adds a tool, "remove" removes
// the last one, "spam" signals a change n times in one call. Each signals
// through the Peer, as notify_tool_list_changed does.
type dynPlugin struct {
	mu    sync.Mutex
	added []string
}

func (d *dynPlugin) module() *fakeModule {
	return fake{exports: map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			ts := []string{tool("add"), tool("remove"), tool("spam")}
			for _, n := range d.added {
				ts = append(ts, tool(n))
			}
			return []byte(`{"tools":[` + strings.Join(ts, ",") + `]}`), nil
		},
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var req struct {
				Request abi.CallToolParams `json:"request"`
			}
			if err := json.Unmarshal(in, &req); err != nil {
				return nil, err
			}
			signals := 1
			d.mu.Lock()
			switch req.Request.Name {
			case "add":
				d.added = append(d.added, fmt.Sprintf("t%d", len(d.added)+1))
			case "remove":
				d.added = d.added[:len(d.added)-1]
			case "spam":
				signals = 10000
			default:
				signals = 0
			}
			d.mu.Unlock()
			peer := sandbox.PeerFrom(ctx)
			for range signals {
				_ = peer.Notify(ctx, "notifications/tools/list_changed", nil)
			}
			// Other notifications still reach the client.
			_ = peer.Notify(ctx, "notifications/message", json.RawMessage(`{"level":"info","data":"done"}`))
			return []byte(`{"content":[{"type":"text","text":"` + req.Request.Name + `"}]}`), nil
		},
	}}.module()
}

// clientPeer records what reaches the client.
type clientPeer struct {
	mu      sync.Mutex
	methods []string
	params  []string // method and params
}

func (p *clientPeer) Notify(_ context.Context, method string, params json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.methods = append(p.methods, method)
	p.params = append(p.params, method+" "+string(params))
	return nil
}

func (p *clientPeer) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("no")
}

func TestDynamicLists(t *testing.T) {
	d := &dynPlugin{}
	mod := d.module()
	other := fake{tools: []string{tool("x")}}.module()
	reg := NewRegistry()
	reports := make(chan ReloadReport, 16)
	m := NewManager(ManagerOptions{
		Loader: NewLoader(LoaderOptions{Logger: discard()}), Registry: reg, FollowLists: true,
		Debounce: 20 * time.Millisecond, Logger: discard(),
		ReadConfig: func() (*config.Config, error) {
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{native("dyn", mod), native("other", other)}
			return cfg, nil
		},
		OnReload: func(rep ReloadReport) { reports <- rep },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		reg.Close(context.Background())
		if n := mod.closes.Load(); n != 1 {
			t.Errorf("module closed %d times; want once, at the end", n)
		}
	}()
	next := func() ReloadReport { return nextReport(t, reports) }
	if rep := next(); !rep.Initial || rep.Err != nil {
		t.Fatalf("initial load: %+v", rep)
	}
	call := func(name string) (*clientPeer, error) {
		g, release := reg.Acquire()
		defer release()
		tl := g.Tool(name)
		if tl == nil {
			return nil, fmt.Errorf("unknown tool %q", name)
		}
		cp := &clientPeer{}
		_, err := tl.Run(ctx, cp, nil, abi.Context{})
		return cp, err
	}
	current := func() ([]string, *Plugin) {
		g, release := reg.Acquire()
		defer release()
		return toolNames(g), g.Plugin("other")
	}
	_, otherBefore := current()

	steps := []struct {
		tool      string
		wantTools []string
	}{
		{"dyn_add", []string{"dyn_add", "dyn_remove", "dyn_spam", "dyn_t1", "other_x"}},
		{"dyn_add", []string{"dyn_add", "dyn_remove", "dyn_spam", "dyn_t1", "dyn_t2", "other_x"}},
		{"dyn_remove", []string{"dyn_add", "dyn_remove", "dyn_spam", "dyn_t1", "other_x"}},
	}
	for _, st := range steps {
		cp, err := call(st.tool)
		if err != nil {
			t.Fatal(err)
		}
		if got := cp.methods; !reflect.DeepEqual(got, []string{"notifications/message"}) {
			t.Errorf("%s: client got %q; want only the log message (list changes come from the swap)", st.tool, got)
		}
		rep := next()
		if !reflect.DeepEqual(rep.Trigger, []string{"list_changed:dyn"}) || !rep.Changes.Tools || len(rep.Changes.Reloaded) != 0 {
			t.Errorf("%s: report %+v; want trigger list_changed:dyn, tools changed, nothing reloaded", st.tool, rep)
		}
		names, otherNow := current()
		if !reflect.DeepEqual(names, st.wantTools) {
			t.Errorf("%s: tools %q; want %q", st.tool, names, st.wantTools)
		}
		if otherNow != otherBefore {
			t.Errorf("%s: the other plugin was rebuilt; want it shared", st.tool)
		}
	}
	if _, err := call("dyn_t1"); err != nil {
		t.Errorf("calling the added tool: %v", err)
	}
	if _, err := call("dyn_t2"); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("calling the removed tool: got %v; want unknown tool", err)
	}

	// A plugin signalling 10000 times costs one re-read.
	lists := mod.count(abi.ExportListTools)
	if _, err := call("dyn_spam"); err != nil {
		t.Fatal(err)
	}
	if _, err := call("dyn_t1"); err != nil { // the server still serves
		t.Fatal(err)
	}
	next()
	if got := mod.count(abi.ExportListTools) - lists; got != 1 {
		t.Errorf("10000 signals read the list %d times; want 1", got)
	}
	select {
	case rep := <-reports:
		t.Errorf("unexpected report %+v", rep)
	default:
	}
}

// TestDynamicListsHammer keeps calling a plugin's fixed tool while the
// plugin adds tools and its lists are re-read and swapped underneath.
func TestDynamicListsHammer(t *testing.T) {
	d := &dynPlugin{}
	mod := d.module()
	reg := NewRegistry()
	relists := make(chan ReloadReport, 64)
	m := NewManager(ManagerOptions{
		Loader: NewLoader(LoaderOptions{Logger: discard()}), Registry: reg, FollowLists: true,
		Debounce: time.Millisecond, Logger: discard(),
		ReadConfig: func() (*config.Config, error) {
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{native("dyn", mod)}
			return cfg, nil
		},
		OnReload: func(rep ReloadReport) {
			if !rep.Initial {
				relists <- rep
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	<-reg.Ready()

	const adds = 20
	callTool := func(name string) error {
		g, release := reg.Acquire()
		defer release()
		tl := g.Tool(name)
		if tl == nil {
			return fmt.Errorf("unknown tool %q in generation %d", name, g.ID)
		}
		_, err := tl.Run(ctx, nil, nil, abi.Context{})
		return err
	}
	addOne := func(i int) {
		t.Helper()
		if err := callTool("dyn_add"); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		select {
		case <-relists:
		case <-time.After(batchTimeout):
			t.Fatalf("add %d: no relist within %v", i, batchTimeout)
		}
		if err := callTool(fmt.Sprintf("dyn_t%d", i+1)); err != nil {
			t.Fatalf("the tool added by add %d: %v", i, err)
		}
	}
	addOne(0)
	// dyn_t1 stays in every later generation, so each call must succeed,
	// whichever generation it lands on.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt() // also when a step fails
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := callTool("dyn_t1"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := 1; i < adds; i++ {
		addOne(i)
	}
	halt()
	select {
	case err := <-errs:
		t.Error(err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	reg.Close(context.Background())
	if n := mod.closes.Load(); n != 1 {
		t.Errorf("module closed %d times; want once", n)
	}
}

// TestDynamicListsAcrossReplicas: two Managers sharing a store stand for
// two replicas of one plugin whose list comes from shared state (here
// one dynPlugin behind both modules, as a key-value bucket would be). A
// call on A changes the list; B re-reads it too, and serves the new tool.
func TestDynamicListsAcrossReplicas(t *testing.T) {
	d := &dynPlugin{}
	shared := store.NewMemory()
	type replica struct {
		m       *Manager
		reg     *Registry
		mod     *fakeModule
		reports chan ReloadReport
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	start := func() *replica {
		r := &replica{reg: NewRegistry(), mod: d.module(), reports: make(chan ReloadReport, 16)}
		r.m = NewManager(ManagerOptions{
			Loader: NewLoader(LoaderOptions{Logger: discard()}), Registry: r.reg, FollowLists: true,
			Debounce: 20 * time.Millisecond, Logger: discard(), Store: shared,
			ReadConfig: func() (*config.Config, error) {
				cfg := config.DefaultConfig()
				cfg.Plugins = []config.Spec{native("dyn", r.mod)}
				return cfg, nil
			},
			OnReload: func(rep ReloadReport) { r.reports <- rep },
		})
		wg.Go(func() {
			if err := r.m.Run(ctx); err != nil {
				t.Errorf("Run: %v", err)
			}
			r.reg.Close(context.Background())
		})
		return r
	}
	a, b := start(), start()
	next := func(r *replica, what string) ReloadReport {
		t.Helper()
		select {
		case rep := <-r.reports:
			return rep
		case <-time.After(batchTimeout):
			t.Fatalf("%s: no report within %v", what, batchTimeout)
			return ReloadReport{}
		}
	}
	next(a, "A's initial load")
	next(b, "B's initial load")
	for _, r := range []*replica{a, b} {
		select {
		case <-r.m.relistReady:
		case <-time.After(batchTimeout):
			t.Fatal("a replica does not follow the store")
		}
	}
	g, release := a.reg.Acquire()
	_, err := g.Tool("dyn_add").Run(ctx, &clientPeer{}, nil, abi.Context{})
	release()
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*replica{"A": a, "B": b} {
		rep := next(r, name+" re-reading dyn")
		if !reflect.DeepEqual(rep.Trigger, []string{"list_changed:dyn"}) || !rep.Changes.Tools {
			t.Errorf("%s: report %+v; want trigger list_changed:dyn, tools changed", name, rep)
		}
		g, release := r.reg.Acquire()
		if g.Tool("dyn_t1") == nil {
			t.Errorf("%s does not list dyn_t1: %q", name, toolNames(g))
		}
		release()
	}
	if n := b.mod.count(abi.ExportCallTool); n != 0 {
		t.Errorf("B's module ran %d calls; want none (the call ran on A)", n)
	}
}
