package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/hosttest"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

var quietLog = hosttest.QuietLog

// loaded returns a registry whose initial load (of no plugins) is done.
func loaded(t *testing.T) *plugins.Registry { return registryOf(t) }

// registryOf returns a registry serving specs, closed when t ends.
func registryOf(t *testing.T, specs ...config.Spec) *plugins.Registry {
	t.Helper()
	reg := plugins.NewRegistry()
	reg.Swap(context.Background(), hosttest.BuildGeneration(t, specs...))
	t.Cleanup(func() { reg.Close(context.Background()) })
	return reg
}

func newServer(t *testing.T, reg *plugins.Registry, opts host.Options) *host.Server {
	t.Helper()
	opts.Logger = quietLog
	srv := host.New(reg, opts)
	t.Cleanup(srv.Close)
	return srv
}

// failingWriter fails every write, like a stdout whose reader went away.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteFailureEndsSession(t *testing.T) {
	srv := newServer(t, loaded(t), host.Options{})
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(t.Context(), srv, inR, failingWriter{}) }()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	err := hosttest.Recv(t, done, "Serve to return")
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("Serve: got %v; want the write error", err)
	}
	inW.Close()
}

// TestServeLines: one answer per line, in order for in-order methods; a
// malformed line and an oversize one are answered (the latter with its
// id) and serving goes on; EOF ends Serve with nil.
func TestServeLines(t *testing.T) {
	srv := newServer(t, loaded(t), host.Options{MaxMessageBytes: 200})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`,
		``,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	}, "\n")
	var out strings.Builder
	if err := Serve(t.Context(), srv, strings.NewReader(in), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var got []string
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`"code":-32700`,
		`{"jsonrpc":"2.0","id":"big","error":{"code":-32600,`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines %q; want %d", len(got), got, len(want))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("line %d: got %s; want it to contain %s", i, got[i], want[i])
		}
	}
}

// After stdin closes, requests still waiting for the initial load get the
// rest of the startup wait on top of the shutdown grace; once loaded, only
// the grace.
func TestDrainTimeCoversStartupWait(t *testing.T) {
	reg := plugins.NewRegistry()
	srv := newServer(t, reg, host.Options{StartupWait: time.Hour, ShutdownGrace: 3 * time.Second})
	if got := drainTime(srv); got < 59*time.Minute {
		t.Errorf("drainTime before the initial load = %v; want about an hour more than %v", got, srv.ShutdownGrace())
	}
	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(), config.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg.Swap(context.Background(), g)
	if got := drainTime(srv); got != 3*time.Second {
		t.Errorf("drainTime after the initial load = %v; want the grace, 3s", got)
	}
}

// The goroutine that reads a request serves it after passing reading on
// (leader/follower): requests in flight never stop the next line from
// being read, and a cancellation reaches the request it names.
func TestReadingGoesOnWhileRequestsRun(t *testing.T) {
	fx := hosttest.NewFixture()
	srv := newServer(t, hosttest.LoadRegistry(t, fx, "test"), host.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(t.Context(), srv, inR, outW) }()
	lines := make(chan string, 16)
	go func() { // ends when outW is closed below
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if l := hosttest.Recv(t, lines, "initialize"); !strings.Contains(l, `"id":0,"result"`) {
		t.Fatalf("initialize: %s", l)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for id := 1; id <= 3; id++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_slow","arguments":{}}}`, id))
		hosttest.Recv(t, fx.Started, "slow call started")
	}
	send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if l := hosttest.Recv(t, lines, "ping answer"); l != `{"jsonrpc":"2.0","id":"p","result":{}}` {
		t.Fatalf("with 3 calls in flight, got %s; want the ping's answer", l)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	if err := hosttest.Recv(t, fx.Cancelled, "cancellation"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call's ctx: %v", err)
	}
	close(fx.Release)
	answered := map[string]bool{}
	for range 2 {
		l := hosttest.Recv(t, lines, "slow call's answer")
		if !strings.Contains(l, `"done"`) {
			t.Fatalf("got %s; want a slow call's answer", l)
		}
		answered[l[strings.Index(l, `"id":`):strings.Index(l, `,"result"`)]] = true
	}
	if !answered[`"id":1`] || !answered[`"id":3`] {
		t.Errorf("answered %v; want ids 1 and 3 (2 was cancelled)", answered)
	}
	inW.Close()
	if err := hosttest.Recv(t, served, "Serve's return"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	outW.Close()
	for l := range lines {
		t.Errorf("unexpected line after the answers: %s", l)
	}
}

// flip is a plugin "f" with one tool, run: it answers at once, or, called
// with {"wait":true}, signals started and waits for release.
type flip struct {
	started chan struct{}
	release chan struct{}
}

func flipServer(t *testing.T) (*host.Server, *flip) {
	t.Helper()
	f := &flip{started: make(chan struct{}, 4), release: make(chan struct{})}
	reg := registryOf(t, config.Spec{Name: "f", Native: plugins.NativeModule(map[string]hosttest.Native{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"run","inputSchema":{"type":"object","properties":{"wait":{"type":"boolean"}}}}]}`), nil
		},
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			if bytes.Contains(in, []byte(`"wait":true`)) {
				f.started <- struct{}{}
				select {
				case <-f.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return hosttest.Text("ran"), nil
		},
	})})
	return newServer(t, reg, host.Options{}), f
}

// writes records each Write to it, so a test sees which messages went out
// together.
type writes struct {
	mu    sync.Mutex
	all   []string
	wrote chan struct{} // if not nil, gets a value per Write
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, string(p))
	if w.wrote != nil {
		w.wrote <- struct{}{}
	}
	return len(p), nil
}

func (w *writes) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.all)
}

// serveFlip serves flipServer over a pipe into out, initialized, with one
// f_run call made and answered, so that f_run is known to be quick (under
// synctest, a call that never blocks takes no time).
func serveFlip(t *testing.T, out io.Writer) (send func(string), f *flip, stop func()) {
	t.Helper()
	srv, f := flipServer(t)
	inR, inW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(t.Context(), srv, inR, out) }()
	send = func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":"warm","method":"tools/call","params":{"name":"f_run","arguments":{}}}` + "\n")
	synctest.Wait()
	return send, f, func() {
		t.Helper()
		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

// Requests that arrive together and are quick are served one after
// another on the reading goroutine, and their answers go out in one Write.
func TestQuickAnswersGoOutTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := &writes{}
		send, _, stop := serveFlip(t, out)
		before := len(out.get())
		send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"f_run","arguments":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"f_run","arguments":{}}}` + "\n")
		synctest.Wait()
		got := out.get()[before:]
		if len(got) != 1 {
			t.Fatalf("got %d writes %q; want the 3 answers in one", len(got), got)
		}
		lines := strings.Split(strings.TrimSuffix(got[0], "\n"), "\n")
		for i, want := range []string{`"id":1,"result":{"content"`, `"id":2,"result":{}`, `"id":3,"result":{"content"`} {
			if i >= len(lines) || !strings.Contains(lines[i], want) {
				t.Fatalf("write %q: line %d should contain %s", got[0], i, want)
			}
		}
		stop()
	})
}

// A request served on the reading goroutine because it is usually quick
// hands reading over once it has run for handoffAfter: what arrived
// behind it is read and answered, and the answers held for the batch go
// out, while it still runs.
func TestQuickCallTurnedSlowHandsReadingOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := &writes{wrote: make(chan struct{}, 64)}
		send, f, stop := serveFlip(t, out)
		before := len(out.get())
		for len(out.wrote) > 0 {
			<-out.wrote
		}
		start := time.Now()
		send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"f_run","arguments":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"f_run","arguments":{"wait":true}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n")
		<-f.started
		<-out.wrote // blocks the bubble until the handoff timer fires
		synctest.Wait()
		if waited := time.Since(start); waited != handoffAfter {
			t.Errorf("reading was handed over after %v; want %v", waited, handoffAfter)
		}
		got := strings.Join(out.get()[before:], "")
		if !strings.Contains(got, `"id":1,"result"`) || !strings.Contains(got, `"id":3,"result":{}`) || strings.Contains(got, `"id":2`) {
			t.Fatalf("while id 2 runs, got %q; want the answers to ids 1 and 3 only", got)
		}
		close(f.release)
		synctest.Wait()
		if got := strings.Join(out.get()[before:], ""); !strings.Contains(got, `"id":2,"result":{"content"`) {
			t.Errorf("after release, got %q; want id 2's answer too", got)
		}
		stop()
	})
}

// While held, messages collect in order; one over 64 KiB goes out after
// what was held (a call's progress before its answer).
func TestWriterHoldKeepsOrder(t *testing.T) {
	out := &writes{}
	w := &writer{w: out, failed: func() {}}
	w.hold()
	w.Send([]byte(`{"a":1}`), nil)
	w.Send([]byte(`{"b":2}`), nil)
	if got := out.get(); len(got) != 0 {
		t.Fatalf("held messages were written: %q", got)
	}
	held := strings.Repeat("y", 40<<10)
	w.Send([]byte(`{"h":"`+held+`"}`), nil)
	if got := out.get(); len(got) != 0 {
		t.Fatalf("held messages were written before %d bytes: %.80q", maxHeld, got)
	}
	w.Send([]byte(`{"h":"`+held+`"}`), nil)
	if got := out.get(); len(got) != 1 {
		t.Fatalf("over %d bytes held, got %d writes; want what was held written at once", maxHeld, len(got))
	}
	big := `{"c":"` + strings.Repeat("x", 70<<10) + `"}`
	w.Send([]byte(big), nil)
	w.release()
	w.Send([]byte(`{"d":4}`), nil)
	got := strings.Join(out.get(), "")
	h := `{"h":"` + held + `"}` + "\n"
	if want := `{"a":1}` + "\n" + `{"b":2}` + "\n" + h + h + big + "\n" + `{"d":4}` + "\n"; got != want {
		t.Errorf("wrote %.80q…; want the six messages in order", got)
	}
}

// TestShutdownAnswersCallsInFlight: when ctx ends (a signal), Serve stops
// reading, lets the call in flight finish and answers it, then returns
// nil; a line written after the signal is never served.
func TestShutdownAnswersCallsInFlight(t *testing.T) {
	fx := hosttest.NewFixture()
	srv := newServer(t, hosttest.LoadRegistry(t, fx, "test"), host.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, inR, outW) }()
	lines := make(chan string, 16)
	go func() { // ends when outW is closed below
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	hosttest.Recv(t, lines, "initialize")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_slow","arguments":{}}}`)
	hosttest.Recv(t, fx.Started, "slow call started")

	stop()
	go func() { // the reader is blocked in Read: this line arrives after the signal
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a call in flight", err)
	case err := <-fx.Cancelled:
		t.Fatalf("the call in flight was cancelled (%v); want it answered", err)
	default:
	}
	close(fx.Release)
	if l := hosttest.Recv(t, lines, "the call's answer"); !strings.Contains(l, `"id":1,"result"`) || !strings.Contains(l, `"done"`) {
		t.Fatalf("got %s; want the call's answer", l)
	}
	if err := hosttest.Recv(t, served, "Serve's return"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	outW.Close()
	for l := range lines {
		t.Errorf("unexpected line after the shutdown: %s", l)
	}
	inR.Close()
}
