package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox/internal/oracle"
)

// Shared by every test of the binary: each guest is built, and the test
// guest compiled, once, by the first test that needs it (needGuest), so a
// run of one test pays for its own guests only.
var (
	testDir    string
	testLogs   = &syncBuffer{}
	testEngine *Engine

	testGuest        = &wasmgen.GoGuest{Pkg: "./testdata/testguest"}
	badImportGuest   = &wasmgen.GoGuest{Pkg: "./testdata/badimport"}
	escapeGuest      = &wasmgen.GoGuest{Pkg: "./testdata/escapeguest"}
	echoExampleGuest = &wasmgen.GoGuest{Pkg: "../examples/echo"}

	pinOnce   sync.Once
	guestWasm []byte // testGuest, once needGuest has returned
	guestErr  error  // its build: the tests that need it skip
	pinErr    error  // its compile: they fail
)

// extismSDK names the reference runtime, go-sdk (sandbox/internal/oracle),
// in tests that run a guest on both (benchmarks, escapes).
const extismSDK = "extism"

// backendFor returns the constructor of the runtime a test names:
// RuntimeNative (with the loop poll) or extismSDK.
func backendFor(rt string) newBackend {
	if rt == extismSDK {
		return foreign(oracle.New)
	}
	return nativeWith(interruptPoll)
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode == gcSpinMode {
		os.Exit(gcSpinChild())
	} else if mode != "" {
		os.Exit(stdoutChild(mode))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testDir = dir
	log := slog.New(slog.NewTextHandler(testLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	testEngine, err = NewEngine(context.Background(), EngineOptions{CacheDir: filepath.Join(dir, "cache"), Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testEngine.Close(context.Background())
	return m.Run()
}

// buildGuest builds the guest g into the run's directory; a test whose
// guest does not build is skipped, with the build's error.
func buildGuest(tb testing.TB, g *wasmgen.GoGuest) []byte {
	tb.Helper()
	wasm, err := g.Build(testDir)
	if err != nil {
		tb.Skipf("test guest %s unavailable: %v", g.Pkg, err)
	}
	return wasm
}

// needGuest builds the test guest the first time, and keeps its compiled
// code in memory for the rest of the run, so each test's Load is an
// in-memory cache hit: instrumented with the loop poll (the native
// default) and as is under close-on-done (the extism runtime and the
// children, through the disk cache). Compiling a Go guest takes ~30 s
// under -race, so both compile at once.
func needGuest(tb testing.TB) {
	tb.Helper()
	pinOnce.Do(func() {
		if guestWasm, guestErr = testGuest.Build(testDir); guestErr != nil {
			return
		}
		errs := make(chan error, 2)
		for _, intr := range []interruptMode{interruptPoll, interruptCloseOnDone} {
			go func() { // exits once its Load returns
				_, err := testEngine.load(context.Background(), "pin", guestWasm, Limits{Instances: 1}, nativeWith(intr))
				errs <- err
			}()
		}
		pinErr = errors.Join(<-errs, <-errs)
	})
	if guestErr != nil {
		tb.Skipf("test guest unavailable: %v", guestErr)
	}
	if pinErr != nil {
		tb.Fatalf("compile the test guest: %v", pinErr)
	}
}

// load loads the test guest into the shared Engine and closes it after tb.
func load(tb testing.TB, lim Limits) *Module {
	tb.Helper()
	needGuest(tb)
	return loadOn(tb, RuntimeNative, guestWasm, lim)
}

// loadOn loads wasm on rt (RuntimeNative or extismSDK) into the shared
// Engine and closes it after tb.
func loadOn(tb testing.TB, rt string, wasm []byte, lim Limits) *Module {
	tb.Helper()
	m, err := testEngine.load(context.Background(), tb.Name(), wasm, lim, backendFor(rt))
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	tb.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// callErr asserts that err is a *CallError and returns it.
func callErr(tb testing.TB, err error) *CallError {
	tb.Helper()
	var ce *CallError
	if !errors.As(err, &ce) {
		tb.Fatalf("got error %v (%T); want *CallError", err, err)
	}
	return ce
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed and replaced on each Write
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

// WaitLine waits until one line holds every one of subs, or ctx ends.
func (b *syncBuffer) WaitLine(ctx context.Context, subs ...string) bool {
	for {
		b.mu.Lock()
		if b.written == nil {
			b.written = make(chan struct{})
		}
		written := b.written
		b.mu.Unlock()
		if b.LineContains(subs...) {
			return true
		}
		select {
		case <-written:
		case <-ctx.Done():
			return false
		}
	}
}

func (b *syncBuffer) Contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Contains(b.buf.String(), s)
}

// LineContains reports whether one line holds every one of subs.
func (b *syncBuffer) LineContains(subs ...string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(l, s) }) {
			return true
		}
	}
	return false
}

// fakePeer records what host functions send and answers requests.
type fakePeer struct {
	mu    sync.Mutex
	calls []peerCall

	reply json.RawMessage
	err   error
	// onRequest and onNotify, when set, run inside the host function.
	onRequest func(ctx context.Context, method string) error
	onNotify  func(method string)
}

type peerCall struct {
	kind, method string
	params       json.RawMessage
}

func (p *fakePeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.record("request", method, params)
	if p.onRequest != nil {
		if err := p.onRequest(ctx, method); err != nil {
			return nil, err
		}
	}
	return p.reply, p.err
}

func (p *fakePeer) Notify(ctx context.Context, method string, params json.RawMessage) error {
	p.record("notify", method, params)
	if p.onNotify != nil {
		p.onNotify(method)
	}
	return p.err
}

func (p *fakePeer) record(kind, method string, params json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, peerCall{kind, method, append(json.RawMessage(nil), params...)})
}

func (p *fakePeer) Calls() []peerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]peerCall(nil), p.calls...)
}

// barrier returns an onRequest that blocks each request until n requests
// have arrived, so it completes only if n calls run at the same time.
func barrier(n int) func(ctx context.Context, method string) error {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	return func(ctx context.Context, _ string) error {
		mu.Lock()
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("barrier: only %d of %d calls arrived: %w", arrived, n, ctx.Err())
		}
	}
}

// hostCall is the input of the guest's "host" export.
func hostCall(fn string, payload string) []byte {
	in := map[string]any{"fn": fn}
	if payload != "" {
		in["payload"] = json.RawMessage(payload)
	}
	b, _ := json.Marshal(in)
	return b
}

// warmAll makes m create n instances and run a call on each.
func warmAll(tb testing.TB, m *Module, n int) {
	tb.Helper()
	peer := &fakePeer{reply: json.RawMessage(`{}`), onRequest: barrier(n)}
	ctx := WithPeer(context.Background(), peer)
	errs := make(chan error, n)
	for range n {
		go func() {
			out, err := m.Call(ctx, "host", hostCall("create_message", `{}`))
			if err == nil && string(out) != "{}" {
				err = fmt.Errorf("reply %s", out)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			tb.Fatalf("warm-up: %v", err)
		}
	}
}
