package guest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// sharedKV is a host whose KV is one map that several instances share,
// as replicas share the server's store.
type sharedKV struct {
	mu       sync.Mutex
	kv       map[string][]byte
	fail     string   // when set, every KV call fails with it
	ops      []string // the KV ops, in order
	notified int      // tool list changes
	logs     []string
}

func (h *sharedKV) Call(name string, payload []byte) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch name {
	case abi.HostToolListChanged:
		h.notified++
		return nil, nil
	case abi.HostKV:
	default:
		return nil, fmt.Errorf("unexpected host function %s", name)
	}
	var req abi.KVRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, err
	}
	h.ops = append(h.ops, req.Op)
	if h.fail != "" {
		return json.Marshal(abi.HostError{Error: h.fail})
	}
	var rep abi.KVReply
	switch req.Op {
	case abi.KVGet:
		rep.Value, rep.Found = h.kv[req.Key]
	case abi.KVSet:
		h.kv[req.Key] = req.Value
	case abi.KVDelete:
		delete(h.kv, req.Key)
	case abi.KVKeys: // one page
		for k := range h.kv {
			rep.Keys = append(rep.Keys, k)
		}
		slices.Sort(rep.Keys)
	case abi.KVIncrement:
		n, _ := strconv.ParseInt(string(h.kv[req.Key]), 10, 64)
		n += req.Delta
		h.kv[req.Key] = []byte(strconv.FormatInt(n, 10))
		rep.Number = n
	}
	return json.Marshal(rep)
}

func (h *sharedKV) Config(string) (string, bool)             { return "", false }
func (h *sharedKV) HTTP(*HTTPRequest) (*HTTPResponse, error) { return nil, ErrNoHost }
func (h *sharedKV) Log(level Level, msg string)              { h.logs = append(h.logs, msg) }
func (h *sharedKV) takeOps() []string                        { o := h.ops; h.ops = nil; return o }
func (h *sharedKV) set(key, value string)                    { h.kv[key] = []byte(value) }
func (h *sharedKV) has(key string) bool                      { _, ok := h.kv[key]; return ok }
func (h *sharedKV) failWith(msg string)                      { h.fail = msg }
func (h *sharedKV) lastLog() string                          { return h.logs[len(h.logs)-1] }

// alias is the kind the tests share: a tool that says its text.
type alias struct {
	Name string `json:"name"`
	Text string `json:"text"`
	Twin bool   `json:"twin,omitempty"` // build registers a second tool
	None bool   `json:"none,omitempty"` // build registers nothing
}

// instance is one plugin instance: its own registry, with the plugin's
// init run in it.
type instance struct {
	r       *registry
	aliases *SharedTools[alias]
}

func newInstance(t *testing.T) *instance {
	t.Helper()
	i := &instance{r: newRegistry()}
	i.do(t, func() {
		i.aliases = NewSharedTools("alias", func(a alias) {
			if a.None {
				return
			}
			AddTool(Tool{Name: a.Name, Description: "Says " + a.Text}, func(*Context, struct{}) (*Result, error) {
				return TextResult(a.Text), nil
			})
			if a.Twin {
				AddTool(Tool{Name: a.Name + "_twin"}, func(*Context, struct{}) (*Result, error) { return nil, nil })
			}
		})
		AddTool(Tool{Name: "static"}, func(*Context, struct{}) (*Result, error) { return TextResult("static"), nil })
	})
	return i
}

// do runs f with i as the SDK's registry.
func (i *instance) do(t *testing.T, f func()) {
	t.Helper()
	old := std
	std = i.r
	defer func() { std = old }()
	f()
}

func (i *instance) tools(t *testing.T) []string {
	t.Helper()
	var names []string
	i.do(t, func() {
		out, err := Dispatch(abi.ExportListTools, nil)
		if err != nil {
			t.Fatalf("list_tools: %v", err)
		}
		var l abi.ListToolsResult
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatal(err)
		}
		for _, tl := range l.Tools {
			names = append(names, tl.Name)
		}
	})
	slices.Sort(names)
	return names
}

// call calls tool through call_tool's envelope and returns its text, or
// the export's error.
func (i *instance) call(t *testing.T, tool string) string {
	t.Helper()
	return i.callWith(t, func() ([]byte, error) {
		return Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"`+tool+`"}}`))
	})
}

// callFrame calls tool as a host of ABI version 3 does, through
// mcphost_call_tool_members's frame.
func (i *instance) callFrame(t *testing.T, tool string) string {
	t.Helper()
	return i.callWith(t, func() ([]byte, error) {
		out, err := CallFrame(abi.AppendMembersFrame(nil, &abi.CallFrame{Name: []byte(tool)}))
		return asHost(out), err
	})
}

func (i *instance) callWith(t *testing.T, export func() ([]byte, error)) string {
	t.Helper()
	var text string
	i.do(t, func() {
		out, err := export()
		if err != nil {
			text = err.Error()
			return
		}
		var res abi.CallToolResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		text = res.Content[0].Text
	})
	return text
}

func (i *instance) add(t *testing.T, a alias) (string, error) {
	t.Helper()
	var name string
	var err error
	i.do(t, func() { name, err = i.aliases.Add(a) })
	return name, err
}

func (i *instance) remove(t *testing.T, name string) error {
	t.Helper()
	var err error
	i.do(t, func() { err = i.aliases.Remove(name) })
	return err
}

func useSharedKV(t *testing.T) *sharedKV {
	t.Helper()
	h := &sharedKV{kv: map[string][]byte{}}
	t.Cleanup(SetHostForTesting(h))
	return h
}

// TestSharedTools: a tool one instance adds is listed and served by
// another (as on another replica) once it lists its tools, and by a fresh
// one (as after a fault) when asked for it; a removal reaches the others
// the same way; an instance that is caught up pays one KV read per list.
func TestSharedTools(t *testing.T) {
	h := useSharedKV(t)
	a, b := newInstance(t), newInstance(t)
	if got := b.tools(t); !slices.Equal(got, []string{"static"}) {
		t.Fatalf("before any add, b lists %v; want [static]", got)
	}
	name, err := a.add(t, alias{Name: "hello", Text: "hi there"})
	if err != nil || name != "hello" {
		t.Fatalf("Add: %q, %v; want hello, nil", name, err)
	}
	if h.notified != 1 {
		t.Errorf("Add told the host %d times of a tool list change; want 1", h.notified)
	}
	if got := a.call(t, "hello"); got != "hi there" {
		t.Errorf("a calls hello: %q; want hi there", got)
	}
	h.takeOps()
	if got := a.tools(t); !slices.Equal(got, []string{"hello", "static"}) {
		t.Errorf("a lists %v; want [hello static]", got)
	}
	if ops := h.takeOps(); !slices.Equal(ops, []string{abi.KVGet}) {
		t.Errorf("a, which made the only change, listed with KV ops %v; want one get", ops)
	}
	if got := b.tools(t); !slices.Equal(got, []string{"hello", "static"}) {
		t.Errorf("b lists %v after a added hello; want [hello static]", got)
	}
	if got := b.call(t, "hello"); got != "hi there" {
		t.Errorf("b calls hello: %q; want hi there", got)
	}
	fresh := newInstance(t)
	if got := fresh.call(t, "hello"); got != "hi there" {
		t.Errorf("a fresh instance, never listed, calls hello: %q; want hi there", got)
	}
	if got := newInstance(t).callFrame(t, "hello"); got != "hi there" {
		t.Errorf("a fresh instance, never listed, calls hello through the call frame: %q; want hi there", got)
	}

	// b replaces it, then removes it; a follows.
	if _, err := b.add(t, alias{Name: "hello", Text: "hello again"}); err != nil {
		t.Fatal(err)
	}
	a.tools(t)
	if got := a.call(t, "hello"); got != "hello again" {
		t.Errorf("a calls hello after b replaced it: %q; want hello again", got)
	}
	if err := b.remove(t, "hello"); err != nil {
		t.Fatal(err)
	}
	if got := b.call(t, "hello"); !strings.Contains(got, `unknown tool "hello"`) {
		t.Errorf("b calls hello after removing it: %q; want unknown tool", got)
	}
	if got := a.tools(t); !slices.Equal(got, []string{"static"}) {
		t.Errorf("a lists %v after b removed hello; want [static]", got)
	}
	if h.has(sharedToolPrefix + "hello") {
		t.Error("the removed tool's record is still in the KV")
	}
}

// TestSharedToolsRefused: an Add that cannot keep its tool adds nothing
// and says why; a record an instance cannot build is logged and skipped,
// the rest still served.
func TestSharedToolsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    alias
		fail string
		want string
	}{
		{"two tools", alias{Name: "x", Twin: true}, "", "registered 2 tools; want 1"},
		{"no tool", alias{Name: "x", None: true}, "", "registered 0 tools; want 1"},
		{"invalid name", alias{Name: "a b"}, "", "invalid tool name"},
		{"store down", alias{Name: "x"}, "plugin state in redis: store unavailable", "store unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := useSharedKV(t)
			a := newInstance(t)
			h.failWith(tc.fail)
			if _, err := a.add(t, tc.a); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Add: %v; want an error containing %q", err, tc.want)
			}
			h.failWith("")
			if got := a.tools(t); !slices.Equal(got, []string{"static"}) {
				t.Errorf("after a refused Add, lists %v; want [static]", got)
			}
			if h.notified != 0 {
				t.Errorf("a refused Add told the host of a change %d times; want 0", h.notified)
			}
		})
	}

	t.Run("unknown kind", func(t *testing.T) {
		h := useSharedKV(t)
		a, b := newInstance(t), newInstance(t)
		if _, err := a.add(t, alias{Name: "known", Text: "k"}); err != nil {
			t.Fatal(err)
		}
		h.set(sharedToolPrefix+"future", `{"kind":"newer","data":{}}`)
		h.set(sharedToolsKey, "2")
		if got := b.tools(t); !slices.Equal(got, []string{"known", "static"}) {
			t.Errorf("b lists %v; want [known static]", got)
		}
		if l := h.lastLog(); !strings.Contains(l, `shared tool "future" not served`) || !strings.Contains(l, `unknown kind "newer"`) {
			t.Errorf("log: %q; want the skipped tool and why", l)
		}
	})

	t.Run("store down while listing", func(t *testing.T) {
		h := useSharedKV(t)
		a := newInstance(t)
		h.failWith("store unavailable")
		if got := a.tools(t); !slices.Equal(got, []string{"static"}) {
			t.Errorf("lists %v with the store down; want [static]", got)
		}
		if l := h.lastLog(); !strings.Contains(l, "shared tools not caught up") || !strings.Contains(l, "store unavailable") {
			t.Errorf("log: %q; want the failed catch-up and why", l)
		}
	})
}

// TestNoSharedToolsNoKV: a plugin with no shared kind lists and misses
// tools without a single KV call.
func TestNoSharedToolsNoKV(t *testing.T) {
	h := useSharedKV(t)
	i := &instance{r: newRegistry()}
	i.do(t, func() {
		AddTool(Tool{Name: "static"}, func(*Context, struct{}) (*Result, error) { return nil, nil })
	})
	i.tools(t)
	i.call(t, "missing")
	if ops := h.takeOps(); len(ops) != 0 {
		t.Errorf("KV ops %v; want none", ops)
	}
}
