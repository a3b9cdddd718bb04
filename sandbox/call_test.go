package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
)

func TestCallEcho(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	for _, in := range []string{"", "hello", `{"op":"echo","msg":"hello"}`, strings.Repeat("abcdefg", 1000)} {
		out, err := m.Call(context.Background(), "echo", []byte(in))
		if err != nil {
			t.Fatalf("echo %d bytes: %v", len(in), err)
		}
		if string(out) != in {
			t.Errorf("echo: got %d bytes; want %d", len(out), len(in))
		}
	}
	v, err := m.CallI32(context.Background(), abi.ExportABIVersion)
	if err != nil || v != 1 {
		t.Errorf("CallI32(%s): got %d, %v; want 1, nil", abi.ExportABIVersion, v, err)
	}
}

// TestCallAllocs: a call of a warm instance allocates only its output,
// the copy out of the arena the instance keeps (wazero's ResultTypes,
// asked on every call, was another).
func TestCallAllocs(t *testing.T) {
	m := load(t, Limits{Instances: 1})
	ctx, in := context.Background(), []byte("hello")
	if _, err := m.Call(ctx, "echo", in); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = m.Call(ctx, "echo", in) }); n > 1 {
		t.Errorf("%v allocations per call; want 1, the output", n)
	}
}

// TestEchoOutputsKept: outputs larger than the arena an instance keeps
// are handed over without a copy (the arena goes with the call); each
// stays as it was while the instance serves more calls, big and small.
func TestEchoOutputsKept(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	ins := []string{strings.Repeat("a", 3*extism.KeepArena), "small", "SMALL", strings.Repeat("b", 5*extism.KeepArena), strings.Repeat("c", extism.KeepArena/2)}
	outs := make([][]byte, len(ins))
	for i, in := range ins {
		out, err := m.Call(context.Background(), "echo", []byte(in))
		if err != nil {
			t.Fatalf("echo %d bytes: %v", len(in), err)
		}
		outs[i] = out
	}
	for i, in := range ins {
		if string(outs[i]) != in {
			t.Errorf("output %d (%d bytes) changed after later calls", i, len(in))
		}
	}
}

func TestExports(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	got := m.Exports()
	for _, want := range []string{"_initialize", "add", "echo", abi.ExportABIVersion} {
		if !m.HasExport(want) {
			t.Errorf("HasExport(%q) = false; want true (exports %v)", want, got)
		}
	}
	if m.HasExport("nosuch") {
		t.Errorf("HasExport(nosuch) = true; want false")
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Errorf("Exports not sorted: %v", got)
		}
	}
	if m.Name() != t.Name() {
		t.Errorf("Name: got %q; want %q", m.Name(), t.Name())
	}
}

// TestCallKinds makes a real guest produce each kind of failure, and checks
// whether the instance was kept or replaced, and that the next call works.
func TestCallKinds(t *testing.T) {
	t.Parallel()
	// Only the timeout cases run under the 1 s budget: a fresh Go-guest
	// instance initialises inside its first call, which under -race on a
	// loaded machine can take longer than that on its own.
	lim := Limits{Instances: 1, Timeout: time.Minute, MaxInputBytes: 1000, MaxOutputBytes: 1000}
	slow := load(t, lim)
	lim.Timeout = time.Second
	short := load(t, lim)
	tests := []struct {
		name, export, input string
		kind                Kind
		detail              string // substring of Detail
		discard             bool
	}{
		{"go panic", "nilderef", "", KindTrap, "nil pointer dereference", true},
		{"endless loop", "loop", "", KindTimeout, "exceeded 1s", true},
		{"sleep past the timeout", "sleep", "", KindTimeout, "exceeded 1s", true},
		{"error_set", "fail", "x", KindGuestError, "guest says no: x", false},
		{"non-zero return", "rc7", "", KindGuestError, "returned 7", false},
		{"output too large", "big", "5000", KindBadOutput, "5000 bytes, limit 1000", false},
		{"input too large", "echo", strings.Repeat("x", 1001), KindBadInput, "1001 bytes, limit 1000", false},
		{"missing export", "nosuch", "", KindMissingExport, "", false},
		{"not an Extism export", "add", "", KindMissingExport, "(i32, i32) -> (i32)", false},
		{"proc_exit", "exit3", "", KindExit, "exit code 3", true},
		{"host function failure", "http", "http://127.0.0.1:1/", KindHostPanic, "not allowed", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := slow
			if tc.kind == KindTimeout {
				m = short
			}
			before := m.Stats()
			_, err := m.Call(context.Background(), tc.export, []byte(tc.input))
			ce := callErr(t, err)
			if ce.Kind != tc.kind {
				t.Fatalf("kind: got %v (%v); want %v", ce.Kind, ce, tc.kind)
			}
			if !strings.Contains(ce.Detail, tc.detail) {
				t.Errorf("detail: got %q; want it to contain %q", ce.Detail, tc.detail)
			}
			if ce.Module != m.Name() || ce.Export != tc.export {
				t.Errorf("got module %q export %q; want %q %q", ce.Module, ce.Export, m.Name(), tc.export)
			}
			wantDiscarded := uint64(0)
			if tc.discard {
				wantDiscarded = 1
			}
			if got := m.Stats().Discarded - before.Discarded; got != wantDiscarded {
				t.Errorf("instances discarded: got %d; want %d", got, wantDiscarded)
			}
			out, err := m.Call(context.Background(), "echo", []byte("next"))
			if err != nil || string(out) != "next" {
				t.Errorf("next call: got %q, %v; want %q", out, err, "next")
			}
		})
	}
}

func TestOutOfMemory(t *testing.T) {
	t.Parallel()
	// Filling 16 MiB a byte at a time takes over 5 s under -race on a
	// busy machine; the timeout is not what is tested.
	m := load(t, Limits{Instances: 1, MemoryPages: 256, Timeout: time.Minute})
	_, err := m.Call(context.Background(), "count", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Call(context.Background(), "oom", nil)
	ce := callErr(t, err)
	if ce.Kind != KindOutOfMemory || !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("got %v; want kind %v", err, KindOutOfMemory)
	}
	if !strings.Contains(ce.Detail, "out of memory") {
		t.Errorf("detail: got %q; want the guest's out-of-memory message", ce.Detail)
	}
	// The replacement is a fresh instance: its counter starts again.
	out, err := m.Call(context.Background(), "count", nil)
	if err != nil || string(out) != "1" {
		t.Errorf("count after OOM: got %q, %v; want 1 from a fresh instance", out, err)
	}
	if s := m.Stats(); s.Discarded != 1 || s.Created != 2 || s.Instances != 1 {
		t.Errorf("stats: got %+v; want 1 discarded, 2 created, 1 live", s)
	}
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1, Timeout: time.Minute, CancelGrace: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The guest announces it has started looping; then the caller gives up.
	peer := &fakePeer{onNotify: func(string) { cancel() }}
	_, err := m.Call(WithPeer(ctx, peer), "loop", nil)
	if ce := callErr(t, err); ce.Kind != KindCanceled || !errors.Is(err, ErrCanceled) {
		t.Fatalf("got %v; want kind %v", err, KindCanceled)
	}
	out, err := m.Call(context.Background(), "count", nil)
	if err != nil || string(out) != "1" {
		t.Errorf("count after cancel: got %q, %v; want 1 from a fresh instance", out, err)
	}
}

func TestCanceledWhileWaiting(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1, Timeout: time.Minute})
	release := make(chan struct{})
	entered := make(chan struct{})
	peer := &fakePeer{reply: json.RawMessage(`{}`), onRequest: func(ctx context.Context, _ string) error {
		close(entered)
		<-release
		return nil
	}}
	done := make(chan error)
	go func() {
		_, err := m.Call(WithPeer(context.Background(), peer), "host", hostCall("create_message", `{}`))
		done <- err
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Call(ctx, "echo", nil)
	if ce := callErr(t, err); ce.Kind != KindCanceled {
		t.Errorf("got %v; want kind %v", err, KindCanceled)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("blocked call: %v", err)
	}
}

// TestExitZero: a guest that calls proc_exit(0) succeeds (go-sdk reports it
// so) but leaves a dead instance; the next call must not fail because of it.
func TestExitZero(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	out, err := m.Call(context.Background(), "exit0", nil)
	if err != nil || string(out) != "bye" {
		t.Fatalf("exit0: got %q, %v; want bye", out, err)
	}
	out, err = m.Call(context.Background(), "echo", []byte("after"))
	if err != nil || string(out) != "after" {
		t.Fatalf("echo after exit0: got %q, %v; want after", out, err)
	}
	if s := m.Stats(); s.Discarded != 1 {
		t.Errorf("discarded: got %d; want 1", s.Discarded)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	const pool, workers, calls = 2, 8, 20
	m := load(t, Limits{Instances: pool})
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				in := fmt.Sprintf(`{"worker":%d,"call":%d}`, w, i)
				out, err := m.Call(context.Background(), "echo", []byte(in))
				if err == nil && string(out) != in {
					err = fmt.Errorf("got %q; want %q", out, in)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := m.Stats()
	if s.Instances > pool || s.Created > pool {
		t.Errorf("stats: got %+v; want at most %d instances", s, pool)
	}
	if want := uint64(workers*calls + 1); s.Calls != want { // + Load's warm-up call
		t.Errorf("calls: got %d; want %d", s.Calls, want)
	}
}

// TestParallelism proves calls run at the same time: each blocks in a host
// function until all have entered, which only happens if they are
// concurrent.
func TestParallelism(t *testing.T) {
	t.Parallel()
	const n = 2
	m := load(t, Limits{Instances: n})
	warmAll(t, m, n)
	if s := m.Stats(); s.Instances != n {
		t.Errorf("instances: got %d; want %d", s.Instances, n)
	}
}

func TestClockAndRandom(t *testing.T) {
	t.Parallel()
	type clock struct {
		Year int    `json:"year"`
		Rand string `json:"rand"`
	}
	var got []clock
	for range 2 {
		m := load(t, Limits{Instances: 1})
		out, err := m.Call(context.Background(), "clock", nil)
		if err != nil {
			t.Fatal(err)
		}
		var c clock
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		got = append(got, c)
	}
	for _, c := range got {
		if c.Year < 2025 {
			t.Errorf("guest year: got %d; want the real clock (>= 2025)", c.Year)
		}
	}
	if got[0].Rand == got[1].Rand {
		t.Errorf("random bytes: both instances got %s; want different", got[0].Rand)
	}
}

func TestEnvAndConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		wantEnv string
	}{
		{"none", nil, ""},
		{"two", map[string]string{"B": "two", "A": "1"}, "A=1\nB=two"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := load(t, Limits{Instances: 1, Env: tc.env, Config: map[string]string{"key": "value-" + tc.name}})
			out, err := m.Call(context.Background(), "env", nil)
			if err != nil || string(out) != tc.wantEnv {
				t.Errorf("environ: got %q, %v; want %q", out, err, tc.wantEnv)
			}
			out, err = m.Call(context.Background(), "config", []byte("key"))
			if err != nil || string(out) != "value-"+tc.name {
				t.Errorf("config key: got %q, %v; want %q", out, err, "value-"+tc.name)
			}
			_, err = m.Call(context.Background(), "config", []byte("missing"))
			if ce := callErr(t, err); ce.Kind != KindGuestError {
				t.Errorf("missing config key: got %v; want a guest error", err)
			}
		})
	}
}

func TestCloseWaitsForCalls(t *testing.T) {
	t.Parallel()
	needGuest(t)
	m, err := testEngine.Load(context.Background(), t.Name(), guestWasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	entered := make(chan struct{})
	peer := &fakePeer{reply: json.RawMessage(`"done"`), onRequest: func(context.Context, string) error {
		close(entered)
		<-release
		return nil
	}}
	result := make(chan error)
	go func() {
		out, err := m.Call(WithPeer(context.Background(), peer), "host", hostCall("list_roots", ""))
		if err == nil && string(out) != `"done"` {
			err = fmt.Errorf("got %q", out)
		}
		result <- err
	}()
	<-entered
	closed := make(chan error)
	go func() { closed <- m.Close(context.Background()) }()
	// A caller waiting for the busy instance is turned away once Close has
	// begun.
	_, err = m.Call(context.Background(), "echo", nil)
	if ce := callErr(t, err); ce.Kind != KindClosed {
		t.Fatalf("call during Close: got %v; want kind %v", err, KindClosed)
	}
	close(release)
	if err := <-result; err != nil {
		t.Errorf("call in flight during Close: %v; want it to finish", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	_, err = m.Call(context.Background(), "echo", nil)
	if ce := callErr(t, err); ce.Kind != KindClosed {
		t.Errorf("call after Close: got %v; want kind %v", err, KindClosed)
	}
}

func TestCloseStopsRunawayCalls(t *testing.T) {
	t.Parallel()
	needGuest(t)
	m, err := testEngine.Load(context.Background(), t.Name(), guestWasm, Limits{Instances: 1, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	peer := &fakePeer{onNotify: func(string) { close(entered) }}
	result := make(chan error)
	go func() {
		_, err := m.Call(WithPeer(context.Background(), peer), "loop", nil)
		result <- err
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close: got %v; want context.Canceled", err)
	}
	if ce := callErr(t, <-result); ce.Kind != KindClosed {
		t.Errorf("runaway call: got %v; want kind %v", ce, KindClosed)
	}
}

// TestSameWasmTwice: two modules of the same bytes share compiled code;
// closing one must leave the other able to create instances.
func TestSameWasmTwice(t *testing.T) {
	t.Parallel()
	needGuest(t)
	a, err := testEngine.Load(context.Background(), "a", guestWasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := load(t, Limits{Instances: 1})
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = b.Call(context.Background(), "nilderef", nil) // discards b's only instance
	if ce := callErr(t, err); ce.Kind != KindTrap {
		t.Fatalf("got %v; want a trap", err)
	}
	out, err := b.Call(context.Background(), "echo", []byte("still here"))
	if err != nil || string(out) != "still here" {
		t.Fatalf("new instance after the twin closed: got %q, %v", out, err)
	}
}

func TestLogs(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	marker := "log-marker-" + strconv.Itoa(int(time.Now().UnixNano()%1e6))
	if _, err := m.Call(context.Background(), "print", []byte(marker)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(context.Background(), "log", []byte("extism-"+marker)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"stream=stdout line=stdout:" + marker,
		"stream=stderr line=stderr:" + marker,
		`msg="guest log" plugin=` + t.Name() + " text=extism-" + marker,
	} {
		if !testLogs.Contains(want) {
			t.Errorf("log does not contain %q", want)
		}
	}
}

func TestTrapDetailHasStderr(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 1})
	_, err := m.Call(context.Background(), "nilderef", nil)
	ce := callErr(t, err)
	for _, want := range []string{"wasm error: unreachable", "stderr: panic: runtime error: invalid memory address or nil pointer dereference"} {
		if !strings.Contains(ce.Detail, want) {
			t.Errorf("detail %q does not contain %q", ce.Detail, want)
		}
	}
	if strings.Contains(ce.Detail, "\n") {
		t.Errorf("detail spans lines: %q", ce.Detail)
	}
	if !bytes.Contains([]byte(ce.Error()), []byte("trap")) {
		t.Errorf("Error() = %q; want it to name the kind", ce.Error())
	}
}

// TestPoolShrinks: after a burst, instances idle past idleTTL are closed,
// one stays warm, and calls go on.
func TestPoolShrinks(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{Instances: 2})
	warmAll(t, m, 2)
	if s := m.Stats(); s.Idle != 2 {
		t.Fatalf("idle after the burst: got %d; want 2", s.Idle)
	}
	m.shrink(time.Now()) // too early: nothing is old enough
	if s := m.Stats(); s.Idle != 2 {
		t.Errorf("idle after an early shrink: got %d; want 2", s.Idle)
	}
	m.shrink(time.Now().Add(idleTTL))
	if s := m.Stats(); s.Idle != 1 || s.Instances != 1 {
		t.Errorf("after shrinking: got %+v; want 1 instance, idle", s)
	}
	out, err := m.Call(context.Background(), "echo", []byte("still warm"))
	if err != nil || string(out) != "still warm" {
		t.Errorf("call after shrinking: got %q, %v", out, err)
	}
}
