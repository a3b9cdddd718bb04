package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// Requests in flight never stop the next line from being read, and a
// cancellation reaches the request it names.
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

// writes records each Write to it, so a test sees which messages went out
// together.
type writes struct {
	mu  sync.Mutex
	all []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, string(p))
	return len(p), nil
}

func (w *writes) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.all)
}

// Each message goes out with its newline in one Write (so concurrent
// answers never interleave), except one over 64 KiB, which is written as
// itself and then its newline rather than copied.
func TestWriterWritesEachMessageWhole(t *testing.T) {
	out := &writes{}
	w := newWriter(out, func() {})
	big := `{"c":"` + strings.Repeat("x", 70<<10) + `"}`
	for _, m := range []string{`{"a":1}`, `{"b":2}`, big, `{"d":4}`} {
		if err := w.Send([]byte(m), nil); err != nil {
			t.Fatal(err)
		}
	}
	got := out.get()
	want := []string{`{"a":1}` + "\n", `{"b":2}` + "\n", big, "\n", `{"d":4}` + "\n"}
	if !slices.Equal(got, want) {
		t.Errorf("got %d writes %.80q…; want %d: each small message with its newline, the big one and then its newline", len(got), got, len(want))
	}
}

// gatedWrites is writes whose first Write waits until release is closed,
// so that a test can send while a write is under way.
type gatedWrites struct {
	writes
	once             sync.Once
	entered, release chan struct{}
}

func (g *gatedWrites) Write(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	return g.writes.Write(p)
}

// Answers sent while another is being written go out together in the
// next Write, after it, in the order sent; their Sends do not wait for
// it. A lone answer is written by its own Send.
func TestWriterCombinesAnswersSentDuringAWrite(t *testing.T) {
	out := &gatedWrites{entered: make(chan struct{}), release: make(chan struct{})}
	w := newWriter(out, func() {})
	first := make(chan error, 1)
	go func() { first <- w.Send([]byte(`{"a":1}`), nil) }()
	hosttest.Recv(t, out.entered, "the first write")
	sent := make(chan error, 1)
	go func() {
		err := w.Send([]byte(`{"b":2}`), nil)
		if err == nil {
			err = w.Send([]byte(`{"c":3}`), nil)
		}
		sent <- err
	}()
	if err := hosttest.Recv(t, sent, "Sends during a write to return"); err != nil {
		t.Fatal(err)
	}
	close(out.release)
	if err := hosttest.Recv(t, first, "the first Send to return"); err != nil {
		t.Fatal(err)
	}
	if err := w.Send([]byte(`{"d":4}`), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1}` + "\n", `{"b":2}` + "\n" + `{"c":3}` + "\n", `{"d":4}` + "\n"}
	if got := out.get(); !slices.Equal(got, want) {
		t.Errorf("got writes %q; want %q", got, want)
	}
}

// Many Sends at once, small and big: every message arrives once, whole,
// on its own line.
func TestWriterConcurrentSends(t *testing.T) {
	var out writes
	w := newWriter(&out, func() {})
	big := strings.Repeat("x", 70<<10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				m := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				if i%10 == 0 {
					m = fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, big)
				}
				if err := w.Send([]byte(m), nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	w.close()
	lines := strings.Split(strings.Join(out.get(), ""), "\n")
	if last := lines[len(lines)-1]; last != "" {
		t.Fatalf("output does not end with a newline: %.80q", last)
	}
	seen := map[string]bool{}
	for _, l := range lines[:len(lines)-1] {
		var m struct{ G, I int }
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %.80q: %v", l, err)
		}
		k := fmt.Sprint(m.G, m.I)
		if seen[k] {
			t.Errorf("message %s written twice", k)
		}
		seen[k] = true
	}
	if len(seen) != 8*50 {
		t.Errorf("got %d messages; want %d", len(seen), 8*50)
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

// TestPipelinedAnswersLeaveTogether: lines that arrive together are
// answered in one write, released before the next read; a line that
// arrives alone is answered in a write of its own before the next read
// too, never held for a later one. Served before the late line arrives:
// the first batch's write is there while the reader waits for more.
func TestPipelinedAnswersLeaveTogether(t *testing.T) {
	srv := newServer(t, loaded(t), host.Options{})
	inR, inW := io.Pipe()
	out := &notifyingWrites{wrote: make(chan struct{}, 8)}
	done := make(chan error, 1)
	go func() { done <- Serve(t.Context(), srv, inR, out) }()
	ping := func(id int) string { return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping"}` + "\n" }
	answer := func(id int) string { return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{}}` + "\n" }
	if _, err := inW.Write([]byte(ping(1) + ping(2) + ping(3))); err != nil {
		t.Fatal(err)
	}
	hosttest.Recv(t, out.wrote, "the batch's answers")
	if _, err := inW.Write([]byte(ping(4))); err != nil {
		t.Fatal(err)
	}
	hosttest.Recv(t, out.wrote, "the lone line's answer")
	inW.Close()
	if err := hosttest.Recv(t, done, "Serve to end"); err != nil {
		t.Fatal(err)
	}
	want := []string{answer(1) + answer(2) + answer(3), answer(4)}
	if got := out.get(); !slices.Equal(got, want) {
		t.Errorf("got writes %q; want %q", got, want)
	}
}

// notifyingWrites is writes that signals each Write.
type notifyingWrites struct {
	writes
	wrote chan struct{}
}

func (n *notifyingWrites) Write(p []byte) (int, error) {
	k, err := n.writes.Write(p)
	n.wrote <- struct{}{}
	return k, err
}

// A held batch goes out before a message too big to copy, so that
// nothing overtakes what was sent before it (a request's progress, then
// its answer); closing writes what is still held.
func TestWriterHeldGoesFirst(t *testing.T) {
	out := &writes{}
	w := newWriter(out, func() {})
	big := `{"c":"` + strings.Repeat("x", 70<<10) + `"}`
	w.hold(true)
	for _, m := range []string{`{"a":1}`, `{"b":2}`, big} {
		if err := w.Send([]byte(m), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Send([]byte(`{"d":4}`), nil); err != nil {
		t.Fatal(err)
	}
	w.close()
	want := []string{`{"a":1}` + "\n" + `{"b":2}` + "\n", big, "\n", `{"d":4}` + "\n"}
	if got := out.get(); !slices.Equal(got, want) {
		t.Errorf("got %d writes %.80q…; want %d: the held two together, the big one, its newline, then the last at close", len(got), got, len(want))
	}
}
