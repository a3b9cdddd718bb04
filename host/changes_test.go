package host

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

func TestChangesAreCoalesced(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	srv.coalesce = time.Hour // the test flushes by hand
	ready, out := newTestSession(t, srv, protocol.V20251125, clientCaps{})
	ready.subs["test://a"] = struct{}{}
	unready, unreadyOut := newTestSession(t, srv, protocol.V20251125, clientCaps{})
	unready.ready.Store(false)

	srv.onChange(plugins.Changes{Tools: true, Reloaded: []string{"x"}, Updated: []string{"test://a", "test://b"}})
	srv.onChange(plugins.Changes{Tools: true, Prompts: true, Updated: []string{"test://a"}})
	srv.onChange(plugins.Changes{Tools: true})
	srv.flushChanges()

	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://a"}}`,
	}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("initialized session got\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	if got := unreadyOut.take(); len(got) != 0 {
		t.Errorf("session without notifications/initialized got %v; want nothing", got)
	}
}

// TestRegistrySwapNotifiesClient goes end to end: a Swap on the registry
// reaches a stdio client as list_changed.
func TestRegistrySwapNotifiesClient(t *testing.T) {
	reg := loadRegistry(t, newFixture(), "test")
	srv := New(reg, Options{Logger: quietLog})
	defer srv.Close()
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.next()

	g := buildGeneration(t, config.Spec{Name: "echo", Native: plugins.NativeModule(echoExports())})
	if ch := reg.Swap(context.Background(), g); !ch.Tools {
		t.Fatalf("swap: got %+v; want tools changed", ch)
	}
	got := map[string]bool{}
	for range 3 { // the echo set has no resources or prompts: all three kinds changed
		got[c.next().Method] = true
	}
	for _, k := range []string{"tools", "resources", "prompts"} {
		if !got["notifications/"+k+"/list_changed"] {
			t.Fatalf("after swap: got %v; want one list_changed of each kind", got)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if w := c.next(); string(w.ID) != "2" {
		t.Fatalf("got %s; want no more notifications, then the ping's response", w.raw)
	}
}

// TestUpdatedFollowsReloadedPlugins checks that a subscriber hears
// resources/updated for every subscribed URI a reloaded plugin serves,
// exactly or through a template, and for nothing else.
func TestUpdatedFollowsReloadedPlugins(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	srv.coalesce = time.Hour // the test flushes by hand
	s, out := newTestSession(t, srv, protocol.V20251125, clientCaps{})
	for _, uri := range []string{"test://readme", "test://items/7", "nobody://x", "test://gone"} {
		s.subs[uri] = struct{}{}
	}
	tests := []struct {
		changes plugins.Changes
		want    []string // URIs updated, in order
	}{
		{plugins.Changes{Reloaded: []string{"test"}}, []string{"test://items/7", "test://readme"}},
		{plugins.Changes{Reloaded: []string{"other"}}, nil},
		{plugins.Changes{Reloaded: []string{"old"}, Updated: []string{"test://gone"}}, []string{"test://gone"}},
	}
	for _, tt := range tests {
		srv.onChange(tt.changes)
		srv.flushChanges()
		var want []string
		for _, u := range tt.want {
			want = append(want, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"`+u+`"}}`)
		}
		if got := out.take(); !slices.Equal(got, want) {
			t.Errorf("%+v: got\n %s\nwant\n %s", tt.changes, strings.Join(got, "\n "), strings.Join(want, "\n "))
		}
	}
}

func TestNotifyClientsDoesNotLog(t *testing.T) {
	var logged strings.Builder
	srv := newServer(t, newFixture(), Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	s, out := newTestSession(t, srv, protocol.V20251125, clientCaps{})
	s.level.Store(1) // debug
	srv.NotifyClients("error", "mcphost", map[string]string{"m": "x"})
	if got := out.take(); len(got) != 1 || !strings.Contains(got[0], `"level":"error"`) {
		t.Errorf("sent %v; want one error notification", got)
	}
	if logged.Len() != 0 {
		t.Errorf("logged %q; want nothing", logged.String())
	}
}

func TestServerNotifyLevels(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	tests := []struct {
		level   int32 // 0 = never set; otherwise index+1
		notify  string
		wantOut bool
	}{
		{0, "emergency", false},
		{1, "debug", true},
		{2, "debug", false},
		{4, "warning", true},
		{4, "notice", false},
		{8, "emergency", true},
		{1, "bogus", false},
	}
	for _, tt := range tests {
		s, out := newTestSession(t, srv, protocol.V20251125, clientCaps{})
		s.level.Store(tt.level)
		srv.Notify(tt.notify, "host", map[string]string{"m": "x"})
		got := out.take()
		if (len(got) == 1) != tt.wantOut {
			t.Errorf("level %d, Notify(%s): got %v; want sent=%v", tt.level, tt.notify, got, tt.wantOut)
		}
		if tt.wantOut && got[0] != `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"`+tt.notify+`","logger":"host","data":{"m":"x"}}}` {
			t.Errorf("got %s", got[0])
		}
		s.close()
	}
}

// TestHammerCallsDuringReloads keeps calls running while generations are
// swapped underneath: every call is answered, and none fails.
func TestHammerCallsDuringReloads(t *testing.T) {
	const calls, swaps = 400, 20
	reg := loadRegistry(t, nil, "echo")
	srv := New(reg, Options{Logger: quietLog})
	defer srv.Close()
	c := startClient(t, srv)
	c.initialize("2025-11-25", `{}`)

	go func() {
		for i := range calls {
			fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"m"}}}`+"\n", i)
		}
	}()
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for range swaps {
			g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(),
				&config.Config{Plugins: []config.Spec{{Name: "echo", Native: plugins.NativeModule(echoExports())}}}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			reg.Swap(context.Background(), g)
		}
	}()
	answered := 0
	for answered < calls {
		w := c.next()
		if w.Method != "" {
			continue // a list_changed from a swap
		}
		if w.Error != nil || strings.Contains(string(w.Result), `"isError":true`) {
			t.Fatalf("call during reloads failed: %s", w.raw)
		}
		answered++
	}
	<-swapped
}

// TestInitialLoadListChanged: the initial load sends list_changed only to
// sessions answered before it finished, from the empty generation; a
// session whose list waited for the load, or came after it, hears
// nothing. A later reload reaches everyone.
func TestInitialLoadListChanged(t *testing.T) {
	tests := []struct {
		name       string
		wait       time.Duration // StartupWait
		listBefore bool          // tools/list before the load
		want       bool          // list_changed after the load
	}{
		{"answered before the load", -1, true, true},
		{"list waited for the load", guard, true, false},
		{"listed after the load (warm start)", guard, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := plugins.NewRegistry()
			srv := New(reg, Options{Logger: quietLog, StartupWait: tt.wait})
			defer srv.Close()
			srv.coalesce = time.Hour // the test flushes by hand
			c := startClient(t, srv)
			c.initialize("2025-11-25", `{}`)
			if tt.listBefore {
				c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			}
			c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			// Requests are served concurrently: the list (answered at
			// once when nothing waits for the load) may come after the
			// ping, so read until both are in.
			listAnswered := !tt.listBefore || tt.wait > 0
			for pinged := false; !pinged || !listAnswered; {
				switch w := c.next(); string(w.ID) {
				case "2":
					pinged = true
				case "1":
					if tt.wait > 0 {
						t.Fatalf("got %s before the load; want the list to wait", w.raw)
					}
					listAnswered = true
				default:
					if w.Method == "notifications/message" && tt.wait <= 0 {
						continue // the early list's warning that plugins are still loading
					}
					t.Fatalf("got %s before the ping's answer", w.raw)
				}
			}
			loaded := loadRegistry(t, newFixture(), "echo")
			g, release := loaded.Acquire()
			defer release()
			reg.Swap(context.Background(), g)
			if tt.listBefore && tt.wait > 0 {
				if w := c.next(); string(w.ID) != "1" || !strings.Contains(string(w.Result), `"echo_echo"`) {
					t.Fatalf("got %s; want tools/list answered from the load", w.raw)
				}
			}
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
			if w := c.next(); string(w.ID) != "3" {
				t.Fatalf("got %s; want tools/list answered", w.raw)
			}
			// A ping after the flush marks the end of what it sent.
			srv.flushChanges()
			c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
			var got []string
			for w := c.next(); string(w.ID) != "4"; w = c.next() {
				got = append(got, w.Method)
			}
			if sent := len(got) > 0; sent != tt.want || (sent && !slices.Contains(got, "notifications/tools/list_changed")) {
				t.Errorf("after the initial load: got %v; want list_changed: %v", got, tt.want)
			}

			// Any later change reaches the session.
			reg.Swap(context.Background(), buildGeneration(t))
			srv.flushChanges()
			c.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
			got = nil
			for w := c.next(); string(w.ID) != "5"; w = c.next() {
				got = append(got, w.Method)
			}
			if !slices.Contains(got, "notifications/tools/list_changed") {
				t.Errorf("after a reload: got %v; want tools list_changed", got)
			}
		})
	}
}

// TestInitialLoadSubscription: a client that subscribes while the initial
// load runs hears nothing when the load arrives, unless it was answered
// a read from a generation the load then changed; a real change after
// the load reaches it, and reads give the new content at once.
func TestInitialLoadSubscription(t *testing.T) {
	tests := []struct {
		name        string
		readEarly   bool // publish a partial generation, and read from it, before the load ends
		wantInitial bool // resources/updated for the initial load
	}{
		{"subscribed during the load", false, false},
		{"read from a generation the load replaced", true, true},
	}
	spec := func() config.Spec {
		return config.Spec{Name: "test", Native: plugins.NativeModule(newFixture().TestExports())}
	}
	const uri = "test://readme"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, srv, c := loadingServer(t)
			c.initialize("2025-11-25", `{}`)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":%q}}`, uri)
			if w := c.next(); string(w.ID) != "1" || w.Error != nil {
				t.Fatalf("subscribe: %s", w.raw)
			}
			if tt.readEarly {
				reg.Publish(context.Background(), buildGeneration(t, spec()))
				c.send(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":%q}}`, uri)
				if w := c.next(); string(w.ID) != "2" || !strings.Contains(string(w.Result), "Read me.") {
					t.Fatalf("read during the load: %s", w.raw)
				}
			}
			// The load ends with its plugin loaded anew (a new module:
			// what a read of the partial generation gave may differ).
			reg.Swap(context.Background(), buildGeneration(t, spec()))
			heard := func(id int) []string {
				t.Helper()
				srv.flushChanges()
				c.send(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
				var got []string
				for w := c.next(); string(w.ID) != strconv.Itoa(id); w = c.next() {
					got = append(got, w.Method)
				}
				return got
			}
			got := heard(3)
			if updated := slices.Contains(got, "notifications/resources/updated"); updated != tt.wantInitial || slices.ContainsFunc(got, func(m string) bool { return strings.HasSuffix(m, "/list_changed") }) {
				t.Errorf("after the initial load: heard %v; want resources/updated: %v, no list_changed", got, tt.wantInitial)
			}
			// A reload that replaces the plugin is news to the subscriber.
			reg.Swap(context.Background(), buildGeneration(t, spec()))
			if got := heard(4); !slices.Contains(got, "notifications/resources/updated") {
				t.Errorf("after a reload: heard %v; want resources/updated", got)
			}
		})
	}
}

// TestInitialLoadListener: the same for a 2026-07-28 subscriptions/listen
// opened while the initial load runs: the load arriving is no news to it;
// a reload after it is.
func TestInitialLoadListener(t *testing.T) {
	reg, srv, c := loadingServer(t)
	c.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["test://readme"]},%s}}`, meta2026(`{}`))
	if w := c.next(); w.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("got %s; want the acknowledgement", w.raw)
	}
	spec := config.Spec{Name: "test", Native: plugins.NativeModule(newFixture().TestExports())}
	heard := func(id int) []string {
		t.Helper()
		srv.flushChanges()
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{%s}}`, id, meta2026(`{}`))
		var got []string
		for w := c.next(); string(w.ID) != strconv.Itoa(id); w = c.next() {
			got = append(got, w.Method)
		}
		return got
	}
	reg.Swap(context.Background(), buildGeneration(t, spec))
	if got := heard(1); len(got) != 0 {
		t.Errorf("after the initial load: heard %v; want nothing", got)
	}
	reg.Swap(context.Background(), buildGeneration(t, spec))
	if got := heard(2); !slices.Contains(got, "notifications/resources/updated") {
		t.Errorf("after a reload: heard %v; want resources/updated", got)
	}
}

// loadingServer is a server whose initial load has not begun, with a
// client connected; the test flushes changes by hand.
func loadingServer(t *testing.T) (*plugins.Registry, *Server, *testClient) {
	reg := plugins.NewRegistry()
	t.Cleanup(func() { reg.Close(context.Background()) })
	srv := New(reg, Options{Logger: quietLog, StartupWait: guard})
	t.Cleanup(srv.Close)
	srv.coalesce = time.Hour
	return reg, srv, startClient(t, srv)
}
