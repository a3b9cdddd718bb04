package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelKeepsState: with the official Go SDK client, a cancelled call
// to a stateful plugin (testdata/counter) whose handler heeds its
// context returns within cancel_grace, and the count goes on (1, 2, 3,
// cancelled, 4); the log says the instance and its state were kept. A
// cancelled call that ignores it is stopped after the grace, the log
// says the state was lost, and the count starts over. Over stdio and
// Streamable HTTP, in both eras.
func TestCancelKeepsState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go plugin")
	}
	cache := t.TempDir() // the plugin is built and compiled once for all the runs
	for _, transport := range []string{"stdio", "http"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+version, func(t *testing.T) { checkCancelKeepsState(t, transport, version, cache) })
		}
	}
}

func checkCancelKeepsState(t *testing.T, transport, version, cache string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A loaded machine may take minutes to build the counter.
	conf := counterConfigWith(t, "cancel_grace = \"3s\"\nload_timeout = \"10m\"\n")
	client := mcp.NewClient(&mcp.Implementation{Name: "cancel", Version: "1"}, nil)
	s := serveCounter(ctx, t, client, conf, transport, version, cache)
	// cancelled calls tool, cancels it once the guest's log says it runs,
	// and waits for the server's log line that says what became of it.
	cancelled := func(tool, running, outcome string) {
		t.Helper()
		cctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { // ends when the client gives up on the call
			_, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool})
			done <- err
		}()
		if _, err := s.log.wait(ctx, running); err != nil {
			stop()
			t.Fatalf("%s: %v\nstderr:\n%s", tool, err, s.log)
		}
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled: the client got %v; want context.Canceled", tool, err)
		}
		// A Go guest of the current SDK takes its calls through the call frame.
		if _, err := s.log.wait(ctx, outcome, "plugin=counter", "export="+abi.ExportCallToolMembers); err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", tool, err, s.log)
		}
	}
	for i := 1; i <= 3; i++ {
		s.count(ctx, t, "count", i, "before the cancellation")
	}
	cancelled("wait_cancel", "wait_cancel: waiting for the cancellation", "cancelled call returned within the grace: instance and its state kept")
	s.count(ctx, t, "count", 4, "after a cancelled call that returned within the grace")
	if l := s.log.find("state was lost"); l != "" {
		t.Errorf("stderr says the state was lost after a call that returned within the grace: %s", l)
	}
	cancelled("ignore_cancel", "ignore_cancel: computing", "cancelled call did not return within the grace: instance stopped and replaced")
	if _, err := s.log.wait(ctx, "plugin instance re-created after a cancelled call outran cancel_grace: its state was lost", "plugin=counter"); err != nil {
		t.Errorf("%v\nstderr:\n%s", err, s.log)
	}
	s.count(ctx, t, "count", 1, "after a cancelled call that outran the grace (a new instance)")
	s.stop(t)
}

// TestCKitCancel builds a C plugin that keeps a count in a global and
// heeds a cancellation with mcp_cancelled() (sdk-guest/c/testdata/
// cancelcount.c), and cancels its wait with the Go SDK client once the
// plugin's log reaches the client: the count goes on (1, 2, cancelled, 3).
func TestCKitCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C plugin and runs mcphost serve")
	}
	wasm := systest.BuildCKitTestdata(t, "cancelcount")
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[[plugin]]\nname = \"c\"\npath = %s\ncancel_grace = \"30s\"\n", systest.Quote(wasm))), 0o644); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "ckit", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			if fmt.Sprint(r.Params.Data) == "wait: waiting for the cancellation" {
				waiting <- struct{}{}
			}
		},
	})
	s := systest.StartServer(t, client, "--config", conf, "--no-watch")
	ctx := t.Context()
	if err := s.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	count := func(want string) {
		t.Helper()
		res, err := s.Session.CallTool(ctx, &mcp.CallToolParams{Name: "c_count"})
		if err != nil || res.IsError || systest.TextOf(t, res) != want {
			t.Fatalf("count: got %v, %q; want %s\nstderr:\n%s", err, textOfOrNil(t, res), want, s.Stderr)
		}
	}
	count("1")
	count("2")
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { // ends when the client gives up on the call
		_, err := s.Session.CallTool(cctx, &mcp.CallToolParams{Name: "c_wait"})
		done <- err
	}()
	<-waiting
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("wait cancelled: the client got %v; want context.Canceled", err)
	}
	count("3") // the one instance serves it once the wait has returned
}
