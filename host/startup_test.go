package host

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// TestCallWaitsOnlyForItsPlugin: while the initial load runs, a call to a
// tool not loaded yet waits for its plugin (not for the load), and is
// answered as soon as a generation holding it is published; a list waits
// for the whole load.
func TestCallWaitsOnlyForItsPlugin(t *testing.T) {
	ctx := context.Background()
	reg := plugins.NewRegistry()
	srv := New(reg, Options{StartupWait: time.Hour, Logger: quietLog})
	t.Cleanup(srv.Close)
	defer reg.Close(ctx)
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)
	echo := func(name string) config.Spec {
		return config.Spec{Name: name, Native: plugins.NativeModule(echoExports())}
	}

	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a_echo","arguments":{"msg":"hi"}}}`)
	reg.Publish(ctx, buildGeneration(t, echo("a")))
	if w := c.next(); string(w.ID) != "1" || w.Error != nil || !strings.Contains(string(w.Result), "hi") {
		t.Fatalf("call to a plugin published while the load runs: got %s; want its result", w.raw)
	}
	select {
	case <-reg.Ready():
		t.Fatal("Ready closed by Publish")
	default:
	}

	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if w := c.next(); string(w.ID) != "3" {
		t.Fatalf("got %s first; want the ping's answer, tools/list waiting for the load", w.raw)
	}
	reg.Swap(ctx, buildGeneration(t, echo("a"), echo("b")))
	for {
		w := c.next()
		if w.Method != "" {
			continue // list_changed for the early answer
		}
		var res struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal(w.Result, &res); err != nil || string(w.ID) != "2" {
			t.Fatalf("tools/list: got %s", w.raw)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if want := []string{"a_echo", "b_echo"}; !slices.Equal(names, want) {
			t.Errorf("tools/list after the load: got %q; want %q", names, want)
		}
		break
	}
}

// TestEarlyListSaysMoreAreComing: a list answered when the startup wait
// runs out, before the initial load is done, is preceded by a warning
// naming the plugins still loading and carries them in its _meta; a list
// after the load carries neither.
func TestEarlyListSaysMoreAreComing(t *testing.T) {
	ctx := context.Background()
	reg := plugins.NewRegistry()
	srv := New(reg, Options{StartupWait: -1, Logger: quietLog, Loading: func() []string { return []string{"b (build)"} }})
	t.Cleanup(srv.Close)
	defer reg.Close(ctx)
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)
	reg.Publish(ctx, buildGeneration(t, config.Spec{Name: "a", Native: plugins.NativeModule(echoExports())}))

	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	w := c.next()
	if w.Method != "notifications/message" || !strings.Contains(string(w.raw), `"level":"warning"`) ||
		!strings.Contains(string(w.raw), `"plugins":["b (build)"]`) || !strings.Contains(string(w.raw), "list_changed follows") {
		t.Fatalf("before the early list: got %s; want a warning naming b", w.raw)
	}
	w = c.next()
	var res struct {
		Tools []struct{ Name string }
		Meta  map[string]struct {
			Message string
			Plugins []string
		} `json:"_meta"`
	}
	if err := json.Unmarshal(w.Result, &res); err != nil || string(w.ID) != "1" {
		t.Fatalf("tools/list: got %s", w.raw)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "a_echo" {
		t.Errorf("early tools/list: got %+v; want a_echo, the plugin loaded so far", res.Tools)
	}
	if m := res.Meta[metaLoading]; !slices.Equal(m.Plugins, []string{"b (build)"}) || m.Message != partialMessage {
		t.Errorf("early tools/list _meta: got %s; want %s naming b", w.Result, metaLoading)
	}

	reg.Swap(ctx, buildGeneration(t, config.Spec{Name: "a", Native: plugins.NativeModule(echoExports())}))
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	for {
		w = c.next()
		if w.Method == "notifications/tools/list_changed" {
			continue
		}
		if string(w.ID) != "2" || strings.Contains(string(w.raw), metaLoading) || w.Method != "" {
			t.Fatalf("tools/list after the load: got %s; want no loading note", w.raw)
		}
		break
	}
}
