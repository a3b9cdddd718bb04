package differential

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/mcphost/mcphost/sandbox/internal/coreruntime"
	"github.com/mcphost/mcphost/sandbox/internal/oracle"
)

// The differential suite runs every guest we have on both runtimes, the
// native kernel and go-sdk (the reference), and compares what a caller
// sees: output bytes, whether the call failed, the kind of failure and,
// where it is deterministic, its detail. The native kernel runs each guest
// both ways: instrumented with the loop poll (the default) and plain under
// wazero's close-on-done.

// diffCase is one call; sequences matter (vars, counters), so the cases of
// a guest run in order on one instance of each runtime.
type diffCase struct {
	name, export, input string
	i32                 bool // CallI32 instead of Call
	anyOutput           bool // the output is not deterministic (clock, random)
}

// outcome is what a caller can observe of one call.
type outcome struct {
	out    string
	kind   sandbox.Kind
	detail string
}

func observe(out []byte, rc int32, i32 bool, err error) outcome {
	o := outcome{out: string(out)}
	if i32 {
		o.out = fmt.Sprint(rc)
	}
	var ce *sandbox.CallError
	if errors.As(err, &ce) {
		o.kind = ce.Kind
		switch ce.Kind {
		case sandbox.KindTimeout, sandbox.KindCanceled, sandbox.KindHostPanic, sandbox.KindTrap, sandbox.KindOutOfMemory:
			// Wording comes from different layers (wazero's stack text,
			// go-sdk's panics); the kind is the contract.
		default:
			o.detail = ce.Detail
		}
	} else if err != nil {
		o.kind = -1
		o.detail = err.Error()
	}
	return o
}

// The runtimes runDiff compares: the native kernel (with the loop poll),
// the native kernel without it, and the reference.
const (
	closeOnDone = sandbox.RuntimeNative + "/close-on-done"
	extismSDK   = "extism"
)

var runtimes = map[string]coreruntime.Choice{
	sandbox.RuntimeNative: {},
	closeOnDone:           {CloseOnDone: true},
	extismSDK:             {New: oracle.New},
}

// runDiff loads wasm on every runtime under lim and compares every case.
func runDiff(t *testing.T, wasm []byte, lim sandbox.Limits, cases []diffCase) {
	t.Helper()
	ctx := context.Background()
	// Loaded at once: each compiles the guest its own way (a Go guest
	// takes ~30 s under -race).
	mods := map[string]*sandbox.Module{}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for rt, choice := range runtimes {
		wg.Go(func() {
			m, err := testEngine.Load(coreruntime.With(ctx, choice), t.Name()+"/"+rt, wasm, lim)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: Load: %w", rt, err))
				return
			}
			t.Cleanup(func() { m.Close(context.Background()) })
			mods[rt] = m
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := map[string]outcome{}
		for rt, m := range mods {
			var out []byte
			var rc int32
			var err error
			if c.i32 {
				rc, err = m.CallI32(ctx, c.export)
			} else {
				out, err = m.Call(ctx, c.export, []byte(c.input))
			}
			got[rt] = observe(out, rc, c.i32, err)
		}
		n, e, cd := got[sandbox.RuntimeNative], got[extismSDK], got[closeOnDone]
		if c.anyOutput {
			n.out, e.out, cd.out = "", "", ""
		}
		if n != e {
			t.Errorf("%s: native %+v; extism %+v", c.name, abbrev(n), abbrev(e))
		}
		if n != cd {
			t.Errorf("%s: native %+v; native under close-on-done %+v", c.name, abbrev(n), abbrev(cd))
		}
	}
}

func abbrev(o outcome) outcome {
	if len(o.out) > 200 {
		o.out = o.out[:200] + fmt.Sprintf("…(%d bytes)", len(o.out))
	}
	return o
}

func TestDifferentialTestGuest(t *testing.T) {
	t.Parallel()
	wasm := guest(t, testGuest)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/empty" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	defer srv.Close()
	cases := []diffCase{
		{name: "abi version", export: abi.ExportABIVersion, i32: true},
		{name: "echo empty", export: "echo"},
		{name: "echo short", export: "echo", input: "hello"},
		{name: "echo odd length", export: "echo", input: strings.Repeat("abcdefg", 1001)},
		{name: "echo 256 KiB", export: "echo", input: strings.Repeat("x", 256<<10)},
		{name: "error_set", export: "fail", input: "x"},
		{name: "non-zero return", export: "rc7"},
		{name: "count 1", export: "count"},
		{name: "count 2", export: "count"},
		{name: "missing export", export: "nosuch"},
		{name: "not an Extism export", export: "add"},
		{name: "config hit", export: "config", input: "key"},
		{name: "config miss", export: "config", input: "missing"},
		{name: "env", export: "env"},
		{name: "print", export: "print", input: "p"},
		{name: "log", export: "log", input: "l"},
		{name: "output too large", export: "big", input: "5000000"},
		{name: "big output", export: "big", input: "100000"},
		{name: "http allowed", export: "http", input: srv.URL + "/x"},
		{name: "http empty body", export: "http", input: srv.URL + "/empty"},
		{name: "http denied", export: "http", input: "http://localhost:1/"},
		{name: "clock", export: "clock", anyOutput: true},
		{name: "go panic", export: "nilderef"},
		{name: "after the panic", export: "count"},
		{name: "proc_exit 3", export: "exit3"},
		{name: "proc_exit 0", export: "exit0"},
		{name: "after proc_exit 0", export: "echo", input: "after"},
		{name: "out of memory", export: "oom"},
		{name: "after oom", export: "count"},
	}
	lim := sandbox.Limits{
		// Generous: go-sdk moves output 8 bytes per host call, and under
		// -race on a loaded machine "output too large" alone can take
		// seconds there; only the cases below are about the time budget.
		Instances: 1, Timeout: time.Minute, MemoryPages: 256, MaxOutputBytes: 1 << 20,
		Config: map[string]string{"key": "value"}, Env: map[string]string{"A": "1"},
		AllowedHosts: []string{"127.0.0.1"},
	}
	runDiff(t, wasm, lim, cases)
	lim.Timeout = 2 * time.Second
	runDiff(t, wasm, lim, []diffCase{
		{name: "endless loop", export: "loop"},
		{name: "sleep past the timeout", export: "sleep"},
		{name: "after the timeouts", export: "echo", input: "after"},
	})
}

func TestDifferentialWasmgen(t *testing.T) {
	t.Parallel()
	seven := int32(7)
	wasm := wasmgen.Module(
		wasmgen.Func{Name: "hello", Output: "hello, world"},
		wasmgen.Func{Name: "json", Output: `{"content":[{"type":"text","text":"x"}]}`},
		wasmgen.Func{Name: "big", Output: strings.Repeat("0123456789", 200)},
		wasmgen.Func{Name: "trap", Trap: true},
		wasmgen.Func{Name: "seven", I32: &seven},
	)
	// go-sdk takes ~1.2 µs per store_u8, far more under -race on a busy
	// machine; the timeout is not what is compared.
	runDiff(t, wasm, sandbox.Limits{Instances: 1, Timeout: time.Minute}, []diffCase{
		{name: "output", export: "hello"},
		{name: "output with input", export: "hello", input: "ignored"},
		{name: "json", export: "json"},
		{name: "2 KB", export: "big"},
		{name: "trap", export: "trap"},
		{name: "after the trap", export: "hello"},
		{name: "plain i32", export: "seven", i32: true},
		{name: "i32 as Extism status", export: "seven"},
		{name: "missing", export: "nope"},
	})
}

// TestDifferentialExamples runs the examples (Go guests built with our SDK)
// through list and call exports on both runtimes.
func TestDifferentialExamples(t *testing.T) {
	if raceEnabled {
		t.Skip("compiling each Go guest takes about 30 s under -race; TestDifferentialTestGuest covers the kernel")
	}
	if testing.Short() {
		t.Skip("builds every example")
	}
	examples := map[string][]diffCase{
		"echo": {
			{name: "echo", export: abi.ExportCallTool, input: toolCall("echo", `{"text":"hi"}`)},
			{name: "echo 100 KB", export: abi.ExportCallTool, input: toolCall("echo", `{"text":"`+strings.Repeat("y", 100000)+`"}`)},
			{name: "bad arguments", export: abi.ExportCallTool, input: toolCall("echo", `{"text":1}`)},
			// The same calls through the frame export: on Extism's go-sdk
			// the guest reads it without mcphost's bulk copies.
			{name: "echo frame", export: abi.ExportCallToolMembers, input: toolFrame("echo", `{"text":"hi"}`)},
			{name: "echo 100 KB frame", export: abi.ExportCallToolMembers, input: toolFrame("echo", `{"text":"`+strings.Repeat("y", 100000)+`"}`)},
			{name: "bad arguments frame", export: abi.ExportCallToolMembers, input: toolFrame("echo", `{"text":1}`)},
			{name: "malformed frame", export: abi.ExportCallToolMembers, input: "\x05"},
		},
		"hashtools": {
			{name: "sha256", export: abi.ExportCallTool, input: toolCall("sha256", `{"text":"abc"}`)},
			{name: "base64", export: abi.ExportCallTool, input: toolCall("base64_encode", `{"text":"abc"}`)},
			{name: "calc", export: abi.ExportCallTool, input: toolCall("calc", `{"expression":"1+2*3"}`)},
			{name: "uuid", export: abi.ExportCallTool, input: toolCall("uuid", `{}`), anyOutput: true},
		},
		"faulty": {
			{name: "echo", export: abi.ExportCallTool, input: toolCall("echo", `{"text":"x"}`)},
			{name: "panic", export: abi.ExportCallTool, input: toolCall("panic", `{}`)},
			{name: "panic frame", export: abi.ExportCallToolMembers, input: toolFrame("panic", `{}`)},
			{name: "loop frame", export: abi.ExportCallToolMembers, input: toolFrame("loop", `{}`)},
			{name: "recovered panic", export: abi.ExportCallTool, input: toolCall("recovered_panic", `{}`)},
			{name: "big", export: abi.ExportCallTool, input: toolCall("big", `{"bytes":70000}`)},
			{name: "loop", export: abi.ExportCallTool, input: toolCall("loop", `{}`)},
			{name: "eat", export: abi.ExportCallTool, input: toolCall("eat", `{}`)},
			{name: "stack overflow", export: abi.ExportCallTool, input: toolCall("stack_overflow", `{}`)},
			{name: "exit", export: abi.ExportCallTool, input: toolCall("exit", `{}`)},
			{name: "trap resource", export: abi.ExportReadResource, input: `{"request":{"uri":"faulty://trap"}}`},
			{name: "ok resource", export: abi.ExportReadResource, input: `{"request":{"uri":"faulty://ok"}}`},
			{name: "trap prompt", export: abi.ExportGetPrompt, input: `{"request":{"name":"trap"}}`},
		},
		"conformance": nil,
		"fetch":       nil,
		"files":       nil,
	}
	for name, calls := range examples {
		t.Run(name, func(t *testing.T) {
			wasm, err := wasmgen.BuildGo(filepath.Join(testDir, "example-"+name+".wasm"), "../../../examples/"+name)
			if err != nil {
				t.Fatal(err)
			}
			cases := []diffCase{
				{name: "list_tools", export: abi.ExportListTools, input: `{}`},
				{name: "list_resources", export: abi.ExportListResources, input: `{}`},
				{name: "list_prompts", export: abi.ExportListPrompts, input: `{}`},
			}
			// 16 MiB, so that "eat" runs out of memory well before the
			// timeout even on a loaded machine.
			runDiff(t, wasm, sandbox.Limits{Instances: 1, Timeout: 3 * time.Second, MemoryPages: 256}, append(cases, calls...))
		})
	}
}

func toolCall(name, args string) string {
	return `{"request":{"name":"` + name + `","arguments":` + args + `}}`
}

// toolFrame is toolCall's call as the frame export takes it, its
// arguments' members indexed.
func toolFrame(name, args string) string {
	return string(abi.AppendMembersFrame(nil, &abi.CallFrame{Name: []byte(name), ID: []byte(`1`), Meta: []byte(`{}`),
		Members: abi.AppendArgMembers(nil, []byte(args)), Arguments: []byte(args)}))
}

// TestDifferentialKernelProbe drives the kernel functions one by one
// through the test guest's "kernel" export, which reports what each
// returns.
func TestDifferentialKernelProbe(t *testing.T) {
	t.Parallel()
	wasm := guest(t, testGuest)
	cases := []diffCase{
		{name: "probe", export: "kernel", input: "probe-input-0123456789"},
		{name: "probe empty", export: "kernel"},
		{name: "vars", export: "vars", input: "a"},
		{name: "vars again", export: "vars", input: "b"},
		{name: "vars full", export: "vars", input: "full"},
	}
	runDiff(t, wasm, sandbox.Limits{Instances: 1}, cases)
}
