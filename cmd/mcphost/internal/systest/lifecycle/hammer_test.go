package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/stdio"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countedModule counts the modules opened and closed.
type countedModule struct {
	plugins.Module
	closes *atomic.Int64
	closed atomic.Int32
}

func (m *countedModule) Close(ctx context.Context) error {
	m.closes.Add(1)
	m.closed.Add(1)
	return m.Module.Close(ctx)
}

// echoModule is a native plugin with one tool, echo, described as desc
// (so a new desc is a changed tool list), that returns its text argument.
func echoModule(desc string, closes *atomic.Int64) *countedModule {
	return &countedModule{closes: closes, Module: systest.NativeEcho(desc)}
}

// TestReloadHammer has several SDK clients call tools without pause, each
// over its own stdio session (in-process pipes), while the Manager reloads
// the plugins many times: one plugin is replaced by a new module every
// time, one never changes. No call may fail or get another call's answer;
// afterwards every module is closed exactly once and the goroutines are
// back to where they started. It runs once per protocol era (2026-07-28
// clients hear of the reloads through subscriptions/listen).
func TestReloadHammer(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { hammer(t, version) })
	}
}

// hammer is TestReloadHammer with clients of one protocol era.
func hammer(t *testing.T, protocolVersion string) {
	const clients, callers, reloads = 4, 2, 100
	baseline := runtime.NumGoroutine()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)

	var closes atomic.Int64
	stable := echoModule("stable", &closes)
	var (
		mu      sync.Mutex
		modules = []*countedModule{stable}
		version int
	)
	reg := plugins.NewRegistry()
	m := plugins.NewManager(plugins.ManagerOptions{
		Loader:   plugins.NewLoader(plugins.LoaderOptions{Logger: log}),
		Registry: reg,
		Logger:   log,
		ReadConfig: func() (*config.Config, error) {
			mu.Lock()
			defer mu.Unlock()
			version++
			moving := echoModule(fmt.Sprintf("version %d", version), &closes)
			modules = append(modules, moving)
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{{Name: "stable", Native: stable}, {Name: "moving", Native: moving}}
			return cfg, nil
		},
		OnReload: func(rep plugins.ReloadReport) {
			if rep.Err != nil || len(rep.Failures) > 0 {
				t.Errorf("reload: %v %v", rep.Err, rep.Failures)
			}
		},
	})
	if err := m.Run(ctx); err != nil { // the initial load; no watching
		t.Fatal(err)
	}
	srv := host.New(reg, host.Options{Logger: log})

	var (
		calls, failed, listChanged atomic.Int64
		progress                   = make(chan struct{}, 1) // a call completed
		stop                       = make(chan struct{})
		wg                         sync.WaitGroup
		sessions                   []*mcp.ClientSession
		served                     sync.WaitGroup
	)
	for c := range clients {
		c2sR, c2sW := io.Pipe() // client → server
		s2cR, s2cW := io.Pipe() // server → client
		served.Add(1)
		go func() {
			defer served.Done()
			defer s2cW.Close()
			// A notification may still be on its way when the client
			// closes its end: that write fails, nothing else may.
			if err := stdio.Serve(ctx, srv, c2sR, s2cW); err != nil && !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("client %d: stdio.Serve: %v", c, err)
			}
		}()
		client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("hammer%d", c), Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged.Add(1) },
		})
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
		if err != nil {
			t.Fatalf("client %d: connect: %v", c, err)
		}
		sessions = append(sessions, cs)
		for k := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					tool := []string{"stable_echo", "moving_echo"}[i%2]
					text := fmt.Sprintf("client %d caller %d call %d", c, k, i)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text}})
					switch {
					case err != nil:
						failed.Add(1)
						t.Errorf("%s: %v", text, err)
					case res.IsError || systest.TextOf(t, res) != text:
						failed.Add(1)
						t.Errorf("%s: got %q (isError %v); want its own text", text, systest.TextOf(t, res), res.IsError)
					default:
						calls.Add(1)
					}
					select {
					case progress <- struct{}{}:
					default:
					}
				}
			}()
		}
	}

	for range reloads {
		for range clients { // calls are running on the current generation
			<-progress
		}
		if rep := m.Reload(ctx, nil); !rep.Changes.Tools {
			t.Fatalf("reload %d: got %+v; want the tool list changed", rep.Gen, rep.Changes)
		}
	}
	<-progress
	close(stop)
	wg.Wait()
	for _, cs := range sessions {
		if err := cs.Close(); err != nil {
			t.Errorf("close client: %v", err)
		}
	}
	served.Wait()
	srv.Close()
	reg.Close(ctx)

	if failed.Load() != 0 {
		t.Errorf("%d calls failed", failed.Load())
	}
	t.Logf("%d calls over %d reloads, %d tools/list_changed received", calls.Load(), reloads, listChanged.Load())
	mu.Lock()
	defer mu.Unlock()
	if got, want := closes.Load(), int64(len(modules)); got != want {
		t.Errorf("modules closed: got %d; want %d (every generation freed)", got, want)
	}
	for i, mod := range modules {
		if n := mod.closed.Load(); n != 1 {
			t.Errorf("module %d closed %d times; want 1", i, n)
		}
	}
	if n := waitGoroutines(baseline); n > baseline {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d after; want at most %d\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// waitGoroutines waits (at most 10 s) for the goroutine count to drop to
// want, polling the condition, and returns the last count.
func waitGoroutines(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		<-tick.C
	}
}
