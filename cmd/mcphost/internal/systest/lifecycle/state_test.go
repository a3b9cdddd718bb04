package lifecycle

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logWatch keeps a process's stderr lines and lets a test wait for one.
type logWatch struct {
	mu     sync.Mutex
	lines  []string
	added  chan struct{} // closed (and replaced) when a line arrives
	eof    bool
	closed chan struct{} // closed at EOF
}

// startPiped starts cmd with its stdin and stdout piped to the test and
// its stderr watched.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, *logWatch) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout, watchLog(stderr)
}

func watchLog(r io.Reader) *logWatch {
	w := &logWatch{added: make(chan struct{}), closed: make(chan struct{})}
	go func() { // ends at the process's EOF on stderr
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			close(w.added)
			w.added = make(chan struct{})
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.eof = true
		close(w.added)
		w.mu.Unlock()
		close(w.closed)
	}()
	return w
}

// find returns the first line holding every one of subs, or "".
func (w *logWatch) find(subs ...string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if all(l, subs) {
			return l
		}
	}
	return ""
}

func all(l string, subs []string) bool {
	for _, s := range subs {
		if !strings.Contains(l, s) {
			return false
		}
	}
	return true
}

// wait returns the first line holding every one of subs, once it comes.
func (w *logWatch) wait(ctx context.Context, subs ...string) (string, error) {
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if all(l, subs) {
				w.mu.Unlock()
				return l, nil
			}
		}
		added, eof := w.added, w.eof
		w.mu.Unlock()
		if eof {
			return "", fmt.Errorf("stderr ended without a line holding %q", subs)
		}
		select {
		case <-added:
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a line holding %q: %w", subs, ctx.Err())
		}
	}
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// TestStatefulPluginKeepsCount: a plugin that keeps state, served from
// its sources (so on the interpreter until its compile is ready), counts
// on across input_required rounds (2026-07-28: the client answers and
// retries) and across the moment its compiled code is ready, which the
// test waits for on stderr: its instance is never thrown away. Over stdio
// and Streamable HTTP.
func TestStatefulPluginKeepsCount(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go plugin")
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) { checkKeepsCount(t, transport) })
	}
}

func checkKeepsCount(t *testing.T, transport string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "state", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
	})
	// A cold cache: the compile happens while it serves.
	s := serveCounter(ctx, t, client, counterConfig(t), transport, "2026-07-28", t.TempDir())
	want := 0
	call := func(tool, when string) {
		t.Helper()
		want++
		s.count(ctx, t, tool, want, when)
	}
	for range 3 {
		call("count", "on the interpreter")
	}
	call("confirmed_count", "with an input_required round")
	if asked.Load() != 1 {
		t.Fatalf("elicitations answered: got %d; want 1 (one input_required round)", asked.Load())
	}
	ready, err := s.log.wait(ctx, "compiled code ready", "plugin=counter")
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, s.log)
	}
	t.Logf("tier-up: %s", ready)
	call("count", "after the compile")
	call("confirmed_count", "with an input_required round after the compile")
	if asked.Load() != 2 {
		t.Errorf("elicitations answered: got %d; want 2", asked.Load())
	}
	s.stop(t)
	for _, bad := range []string{"starts over", "instance discarded", "state was lost"} {
		if l := s.log.find(bad); l != "" {
			t.Errorf("stderr says %q: %s", bad, l)
		}
	}
}

// shortSession runs cmd (serve) for one short session as a client would
// (initialize, list, call count, each waiting for its answer), closes
// stdin, runs atExit (when not nil), and returns stderr once the process
// has exited; the call must have counted 1.
func shortSession(t *testing.T, which string, cmd *exec.Cmd, atExit func(*exec.Cmd, *logWatch)) string {
	t.Helper()
	session := []struct {
		id  int // 0: a notification
		req string
	}{
		{1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"short","version":"1"}}}`},
		{0, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{2, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{3, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count"}}`},
	}
	stdin, stdout, log := startPiped(t, cmd)
	lines := bufio.NewScanner(stdout)
	var last string
	for _, m := range session {
		io.WriteString(stdin, m.req+"\n")
		if m.id == 0 {
			continue
		}
		id := fmt.Sprintf(`"id":%d,`, m.id)
		for last = ""; !strings.Contains(last, id); last = lines.Text() { // past notifications
			if !lines.Scan() {
				stdin.Close()
				<-log.closed
				cmd.Wait()
				t.Fatalf("%s run: no answer to %s\nstderr:\n%s", which, m.req, log)
			}
		}
	}
	stdin.Close() // the session is over
	if atExit != nil {
		atExit(cmd, log)
	}
	io.Copy(io.Discard, stdout)
	<-log.closed
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s run: %v\nstderr:\n%s", which, err, log)
	}
	if !strings.Contains(last, `"id":3`) || !strings.Contains(last, `"text":"1"`) {
		t.Fatalf("%s run: the call did not count 1: %s\nstderr:\n%s", which, last, log)
	}
	return log.String()
}

// TestShortRunsFillCompileCache: short sessions of serve (a client
// lists, calls one tool and closes stdin) on a cold cache. The first
// starts the plugin on the interpreter and, at exit, finishes its compile
// for the cache (up to --compile-wait), unless a signal ends that wait:
// the first run gets SIGTERM as soon as it says it is finishing, and
// exits at once saying what it left. The second run is not interrupted;
// the third loads the compiled code from the cache on first use and
// compiles nothing.
func TestShortRunsFillCompileCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go plugin")
	}
	conf, cache := counterConfig(t), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// run runs one session, then atExit once stdin is closed, and
	// returns stderr.
	run := func(which string, atExit func(*exec.Cmd, *logWatch)) string {
		t.Helper()
		// A long bound, so that a compile ends in the cache however
		// loaded the machine is; the default is 10 s.
		cmd := exec.CommandContext(ctx, systest.Binary(t), "serve", "--config", conf, "--no-watch", "--compile-wait", "4m")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		return shortSession(t, which, cmd, atExit)
	}

	// reached says how a run's compile reached the cache, or fails.
	reached := func(which, stderr string) {
		t.Helper()
		switch {
		case strings.Contains(stderr, "compiles not finished at exit") && strings.Contains(stderr, "interrupted by a signal"):
			t.Logf("%s run: SIGTERM ended the wait for the compile", which)
		case strings.Contains(stderr, "finishing compiles for the cache"):
			if !strings.Contains(stderr, "compiles finished and stored in the cache") {
				t.Fatalf("%s run: a compile was under way at exit and did not finish:\n%s", which, stderr)
			}
			t.Logf("%s run: the compile was under way at exit and finished for the cache", which)
		case strings.Contains(stderr, "compiled code ready"):
			t.Logf("%s run: the compile finished before the session ended", which)
		case strings.Contains(stderr, "code=compiled"):
			t.Logf("%s run: loaded from the cache", which)
		default:
			t.Fatalf("%s run: neither compiled nor loaded from the cache:\n%s", which, stderr)
		}
	}
	reached("first", run("first", func(cmd *exec.Cmd, log *logWatch) {
		if _, err := log.wait(ctx, "finishing compiles for the cache"); err == nil {
			cmd.Process.Signal(syscall.SIGTERM)
		}
	}))
	reached("second", run("second", nil))

	third := run("third", nil)
	if !strings.Contains(third, `plugin module loaded on first use" plugin=counter`) || !strings.Contains(third, "code=compiled") {
		t.Errorf("third run: the plugin did not load compiled code on first use:\n%s", third)
	}
	for _, compiled := range []string{"compiled code ready", "finishing compiles", "interpreter"} {
		if strings.Contains(third, compiled) {
			t.Errorf("third run: stderr says %q: it compiled again:\n%s", compiled, third)
		}
	}
}
