package wasip2

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// TestEnvironment: get-environment lists State.Env sorted by key, and
// exit ends the call with wazero's exit error, 0 for ok and 1 for err.
func TestEnvironment(t *testing.T) {
	inst := testInstance(t, 1<<20, &State{Env: map[string]string{"B": "2", "A": "1"}})
	got := hostCall(t, inst, &component.FuncType{}, "wasi:cli/environment", "get-environment").([]any)
	if len(got) != 2 || got[0].([]any)[0] != "A" || got[1].([]any)[1] != "2" {
		t.Errorf("get-environment: %v, want [[A 1] [B 2]]", got)
	}
	for _, tt := range []struct {
		status component.Case
		code   uint32
	}{{component.Case{Index: 0}, 0}, {component.Case{Index: 1}, 1}} {
		r := catch(func() { hostCall(t, inst, &component.FuncType{}, "wasi:cli/exit", "exit", tt.status) })
		if e, isExit := r.(*sys.ExitError); !isExit || e.ExitCode() != tt.code {
			t.Errorf("exit(%d): %v, want an exit error of code %d", tt.status.Index, r, tt.code)
		}
	}
}

// failingWriter fails every write with err.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestOutputStreams: stdout's writes reach State.Stdout; a write larger
// than check-write allows, or one its writer fails, is
// last-operation-failed with an error whose debug string says why, and
// the stream stays failed.
func TestOutputStreams(t *testing.T) {
	var out bytes.Buffer
	broken := errors.New("disk on fire")
	inst := testInstance(t, 1<<20, &State{Stdout: &out, Stderr: failingWriter{broken}})
	const streams = "wasi:io/streams"
	call := func(name string, args ...any) component.Case {
		return hostCall(t, inst, &component.FuncType{}, streams, name, args...).(component.Case)
	}
	// failure is the debug string of a last-operation-failed result.
	failure := func(c component.Case) string {
		if c.Index != 1 || c.Val.(component.Case).Index != 0 {
			return ""
		}
		e := c.Val.(component.Case).Val.(*ioError)
		return hostCall(t, inst, &component.FuncType{}, "wasi:io/error", "[method]error.to-debug-string", e).(string)
	}

	stdout := hostCall(t, inst, &component.FuncType{}, "wasi:cli/stdout", "get-stdout").(*outputStream)
	if c := call("[method]output-stream.check-write", stdout); c.Index != 0 || c.Val != uint64(maxWrite) {
		t.Errorf("check-write: %v, want ok(%d)", c, maxWrite)
	}
	for _, name := range []string{"[method]output-stream.write", "[method]output-stream.blocking-write-and-flush"} {
		if c := call(name, stdout, []byte("hi ")); c.Index != 0 {
			t.Errorf("%s: %v", name, c)
		}
	}
	if c := call("[method]output-stream.write-zeroes", stdout, uint64(2)); c.Index != 0 {
		t.Errorf("write-zeroes: %v", c)
	}
	if out.String() != "hi hi \x00\x00" {
		t.Errorf("stdout got %q", out.String())
	}
	if c := call("[method]output-stream.write", stdout, make([]byte, maxWrite+1)); !strings.Contains(failure(c), "more than check-write allowed") {
		t.Errorf("a write over check-write: %v", c)
	}
	if c := call("[method]output-stream.flush", stdout); !strings.Contains(failure(c), "more than check-write allowed") {
		t.Errorf("flush after a failed write: %v, want the failure again", c)
	}

	stderr := hostCall(t, inst, &component.FuncType{}, "wasi:cli/stderr", "get-stderr").(*outputStream)
	if c := call("[method]output-stream.write", stderr, []byte("x")); failure(c) != broken.Error() {
		t.Errorf("a write its writer fails: %v", c)
	}
	if c := call("[method]output-stream.check-write", stderr); failure(c) != broken.Error() {
		t.Errorf("check-write after a failed write: %v, want the failure again", c)
	}

	stdin := hostCall(t, inst, &component.FuncType{}, "wasi:cli/stdin", "get-stdin").(*inputStream)
	if c := call("[method]input-stream.read", stdin, uint64(10)); c.Index != 1 || c.Val.(component.Case).Index != 1 {
		t.Errorf("reading stdin: %v, want closed", c)
	}
}

// TestPoll: a pollable due now is ready; one far off blocks until the
// call's context ends, and the call then fails with its cause.
func TestPoll(t *testing.T) {
	inst := testInstance(t, 1<<20, &State{})
	clock := "wasi:clocks/monotonic-clock"
	now := hostCall(t, inst, &component.FuncType{}, clock, "subscribe-duration", uint64(0)).(*pollable)
	far := hostCall(t, inst, &component.FuncType{}, clock, "subscribe-duration", uint64(1<<62)).(*pollable)
	if !now.ready() || far.ready() {
		t.Fatalf("ready: now %v, far %v", now.ready(), far.ready())
	}
	poll := Host()[component.Key("wasi:io/poll", "poll")]
	got, err := poll(&component.HostCall{Ctx: context.Background(), Inst: inst}, []any{[]any{far, now}})
	if err != nil || len(got.([]any)) != 1 || got.([]any)[0] != uint64(1) {
		t.Errorf("poll [far, now]: %v, %v; want [1]", got, err)
	}
	if _, err := poll(&component.HostCall{Ctx: context.Background(), Inst: inst}, []any{[]any{}}); err == nil {
		t.Error("poll of no pollables succeeded")
	}
	timedOut := errors.New("the call's timeout")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(timedOut)
	if _, err := poll(&component.HostCall{Ctx: ctx, Inst: inst}, []any{[]any{far}}); !errors.Is(err, timedOut) {
		t.Errorf("poll [far] in an ended call: %v, want its cause", err)
	}
	block := Host()[component.Key("wasi:io/poll", "[method]pollable.block")]
	if _, err := block(&component.HostCall{Ctx: ctx, Inst: inst}, []any{far}); !errors.Is(err, timedOut) {
		t.Errorf("block on far in an ended call: %v, want its cause", err)
	}
}

// TestRandom: random bytes come in the length asked, up to 1 MiB.
func TestRandom(t *testing.T) {
	inst := testInstance(t, 1<<20, &State{})
	for _, iface := range []string{"wasi:random/random", "wasi:random/insecure"} {
		name := "get-random-bytes"
		if iface == "wasi:random/insecure" {
			name = "get-insecure-random-bytes"
		}
		if b := hostCall(t, inst, &component.FuncType{}, iface, name, uint64(32)).([]byte); len(b) != 32 || bytes.Equal(b, make([]byte, 32)) {
			t.Errorf("%s(32): %x", name, b)
		}
		f := Host()[component.Key(iface, name)]
		if _, err := f(&component.HostCall{Inst: inst}, []any{uint64(1<<20 + 1)}); err == nil {
			t.Errorf("%s of more than 1 MiB succeeded", name)
		}
	}
}

// TestConfig: wasi:config/store reads the config table over the
// environment, under both its names.
func TestConfig(t *testing.T) {
	inst := testInstance(t, 1<<20, &State{
		Env:    map[string]string{"API_KEY": "env", "HOME": "/home"},
		Config: map[string]string{"API_KEY": "config", "mode": "fast"},
	})
	getAll := []any{[]any{"API_KEY", "config"}, []any{"HOME", "/home"}, []any{"mode", "fast"}}
	for _, iface := range []string{"wasi:config/store@0.2.0-draft", "wasi:config/runtime"} {
		for _, tt := range []struct {
			key  string
			want component.Case
		}{
			{"API_KEY", component.Case{Index: 1, Val: "config"}},
			{"HOME", component.Case{Index: 1, Val: "/home"}},
			{"missing", component.Case{Index: 0}},
		} {
			if got := hostCall(t, inst, &component.FuncType{}, iface, "get", tt.key).(component.Case).Val; got != tt.want {
				t.Errorf("%s get %s: %v, want %v", iface, tt.key, got, tt.want)
			}
		}
		got := hostCall(t, inst, &component.FuncType{}, iface, "get-all").(component.Case).Val.([]any)
		if len(got) != len(getAll) {
			t.Fatalf("%s get-all: %v, want %v", iface, got, getAll)
		}
		for i := range got {
			if g, w := got[i].([]any), getAll[i].([]any); g[0] != w[0] || g[1] != w[1] {
				t.Errorf("%s get-all[%d]: %v, want %v", iface, i, g, w)
			}
		}
	}
}

// TestLogging: a guest's log line is a "guest log" record at its level
// (critical above error), with its context when it gives one, and is
// dropped below the logger's level.
func TestLogging(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	inst := testInstance(t, 1<<20, &State{Log: log})
	for _, tt := range []struct {
		level     uint32 // trace, debug, info, warn, error, critical
		context   string
		want      string // "" when dropped
		wantNoCtx bool
	}{
		{0, "", "", false},
		{1, "", `level=DEBUG msg="guest log" text=hello`, true},
		{3, "db", `level=WARN msg="guest log" text=hello context=db`, false},
		{5, "", `level=ERROR+4 msg="guest log" text=hello`, true},
	} {
		buf.Reset()
		hostCall(t, inst, &component.FuncType{}, "wasi:logging/logging", "log", component.Case{Index: tt.level}, tt.context, "hello")
		got := buf.String()
		if !strings.Contains(got, tt.want) || (tt.want == "" && got != "") || (tt.wantNoCtx && strings.Contains(got, "context=")) {
			t.Errorf("level %d: %q, want %q", tt.level, got, tt.want)
		}
	}
}
