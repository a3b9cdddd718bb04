package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
)

var tierWasm = wasmgen.Module(
	wasmgen.Func{Name: "hello", Output: "hello"},
	wasmgen.Func{Name: "spin", Spin: true},
	wasmgen.Func{Name: "trap", Trap: true},
)

// heldEngine returns an Engine that loads modules on the interpreter and
// holds each background compile until release is closed (or the module
// closes); started receives the name of each compile that began waiting.
func heldEngine(t *testing.T) (e *Engine, started chan string, release chan struct{}) {
	t.Helper()
	e, err := NewEngine(context.Background(), EngineOptions{CacheDir: filepath.Join(t.TempDir(), "cache"),
		Logger: testEngine.log, InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	started, release = make(chan string, 16), make(chan struct{})
	e.holdCompile = func(ctx context.Context) {
		started <- "held"
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e, started, release
}

// TestTierServesBeforeCompile: on a cold cache, Load returns with the
// module on the interpreter while the compile is held, the module serves
// calls (a Go guest's runtime initialises there), and a timeout and a
// trap end as they do on compiled code (the instance thrown away), with
// the loop poll and with close-on-done; once the compile is let go, calls
// run on the compiled code and the interpreter's runtime is retired.
func TestTierServesBeforeCompile(t *testing.T) {
	t.Parallel()
	guests := []struct {
		name           string
		wasm           func() []byte
		ok, spin, trap string
		timeout        time.Duration
		want           string
		needsGuest     bool
		swap           bool // let the compile run (~30 s for a Go guest under -race)
	}{
		{name: "wat", wasm: func() []byte { return tierWasm }, ok: "hello", spin: "spin", trap: "trap",
			timeout: 300 * time.Millisecond, want: "hello", swap: true},
		// A Go guest's runtime initialises on the interpreter within its
		// warm-up call, which takes up to a second under -race.
		{name: "go", wasm: func() []byte { return guestWasm }, ok: "echo", spin: "loop", trap: "nilderef",
			timeout: 3 * time.Second, want: "x", needsGuest: true},
	}
	for _, g := range guests {
		for _, mode := range modes {
			t.Run(g.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				if g.needsGuest {
					needGuest(t)
				}
				e, started, release := heldEngine(t)
				ctx := context.Background()
				m, err := e.load(ctx, "tier", g.wasm(), Limits{InterpretFirst: true, Instances: 1, Timeout: g.timeout}, nativeWith(mode.intr))
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				<-started
				if !m.Stats().Interpreted {
					t.Fatal("Stats.Interpreted: got false on a cold cache; want true")
				}
				if got, want := polled(m), mode.intr == interruptPoll; got != want {
					t.Fatalf("polled: got %v; want %v", got, want)
				}
				interp := m.be
				out, err := m.Call(ctx, g.ok, []byte("x"))
				if err != nil || string(out) != g.want {
					t.Fatalf("call before the compile: got %q, %v; want %q", out, err, g.want)
				}
				for _, tc := range []struct {
					export string
					kind   Kind
				}{{g.spin, KindTimeout}, {g.trap, KindTrap}} {
					_, err := m.Call(ctx, tc.export, nil)
					if ce := callErr(t, err); ce.Kind != tc.kind {
						t.Errorf("%s on the interpreter: got %v (kind %v); want kind %v", tc.export, err, ce.Kind, tc.kind)
					}
				}
				if s := m.Stats(); s.Discarded != 2 || !s.Interpreted {
					t.Errorf("stats after the faults: got %+v; want 2 discarded, still interpreted", s)
				}
				if !g.swap {
					m.mu.Lock()
					m.stopCompile() // as a newer load would
					m.mu.Unlock()
					<-m.compileDone
					return
				}

				close(release)
				if err := e.waitCompiles(ctx); err != nil {
					t.Fatal(err)
				}
				if s := m.Stats(); s.Interpreted {
					t.Fatalf("Stats.Interpreted after the compile: got true; want false")
				}
				m.mu.Lock()
				be, old := m.be, m.old
				m.mu.Unlock()
				if be == interp || old != nil {
					t.Fatalf("after the swap: backend is the interpreter's %v, retired one still open %v", be == interp, old != nil)
				}
				if got, want := polled(m), mode.intr == interruptPoll; got != want {
					t.Errorf("polled after the swap: got %v; want %v", got, want)
				}
				out, err = m.Call(ctx, g.ok, []byte("x"))
				if err != nil || string(out) != g.want {
					t.Fatalf("call after the swap: got %q, %v; want %q", out, err, g.want)
				}
				m.mu.Lock()
				for _, inst := range m.idle {
					if inst.be != be {
						t.Errorf("an idle instance is not of the compiled code")
					}
				}
				m.mu.Unlock()
				if _, err := m.Call(ctx, g.spin, nil); !errors.Is(err, ErrTimeout) {
					t.Errorf("%s on compiled code: got %v; want a timeout", g.spin, err)
				}

				// The code is in the cache now: the next load compiles in
				// the foreground, from it.
				again, err := e.load(ctx, "again", g.wasm(), Limits{InterpretFirst: true, Instances: 1, Timeout: g.timeout}, nativeWith(mode.intr))
				if err != nil {
					t.Fatal(err)
				}
				defer again.Close(ctx)
				if again.Stats().Interpreted {
					t.Error("a load with compiled code in the cache went to the interpreter")
				}
			})
		}
	}
}

// TestTierSwapLosesNoCall: calls running on several instances while the
// compile ends and the swap happens all succeed; afterwards the pool holds
// only instances of the compiled code and the interpreter is retired.
func TestTierSwapLosesNoCall(t *testing.T) {
	t.Parallel()
	e, started, release := heldEngine(t)
	ctx := context.Background()
	const instances = 3
	m, err := e.load(ctx, "hammer", tierWasm, Limits{InterpretFirst: true, Instances: instances}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	<-started
	interp := m.be

	var calls, failed atomic.Int64
	// more callers than instances: some wait for a slot
	stop := callAll(2*instances, func() {
		out, err := m.Call(ctx, "hello", nil)
		calls.Add(1)
		if err != nil || string(out) != "hello" {
			failed.Add(1)
			t.Errorf("call: got %q, %v", out, err)
		}
	})
	close(release) // the swap happens while calls run
	if err := e.waitCompiles(ctx); err != nil {
		t.Fatal(err)
	}
	// A few more calls on the compiled code, then stop.
	for range 20 {
		if _, err := m.Call(ctx, "hello", nil); err != nil {
			t.Fatal(err)
		}
		calls.Add(1)
	}
	stop()

	s := m.Stats()
	if s.Interpreted || failed.Load() != 0 || s.Calls < uint64(calls.Load()) || s.Failures != 0 {
		t.Errorf("stats %+v; %d calls, %d failed; want all served, none failed, not interpreted", s, calls.Load(), failed.Load())
	}
	if s.Instances > instances || s.Idle != s.Instances {
		t.Errorf("pool after the swap: %d instances, %d idle; want at most %d, all idle", s.Instances, s.Idle, instances)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.be == interp || m.old != nil || m.oldBusy != 0 {
		t.Errorf("interpreter not retired: current is it %v, old open %v, %d busy", m.be == interp, m.old != nil, m.oldBusy)
	}
	for _, inst := range m.idle {
		if inst.be != m.be {
			t.Error("an idle instance is the interpreter's")
		}
	}
}

// TestTierNewerLoadStopsCompile: a newer load under the same name (a
// save) stops the older module's compile; the older module keeps serving
// on the interpreter until it closes.
func TestTierNewerLoadStopsCompile(t *testing.T) {
	t.Parallel()
	e, started, release := heldEngine(t)
	ctx := context.Background()
	old, err := e.load(ctx, "saved", tierWasm, Limits{InterpretFirst: true, Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	<-started
	interp := old.be
	other, err := e.load(ctx, "other", tierWasm, Limits{InterpretFirst: true, Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	<-started
	newer, err := e.load(ctx, "saved", wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello again"}),
		Limits{InterpretFirst: true, Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close(ctx)
	<-old.compileDone // stopped while held
	select {
	case <-other.compileDone:
		t.Fatal("a load under another name stopped a compile")
	default:
	}
	if !old.Stats().Interpreted || old.be != interp {
		t.Error("the superseded module got compiled code")
	}
	if out, err := old.Call(ctx, "hello", nil); err != nil || string(out) != "hello" {
		t.Errorf("the superseded module: got %q, %v; want it to serve on the interpreter", out, err)
	}
	close(release)
	<-newer.compileDone
	<-other.compileDone
	if out, err := newer.Call(ctx, "hello", nil); err != nil || string(out) != "hello again" || newer.Stats().Interpreted {
		t.Errorf("the newer module: got %q, %v, interpreted %v; want compiled code", out, err, newer.Stats().Interpreted)
	}
}

// TestTierEngineCloseFinishesCompile: closing the Engine lets a compile
// in the background finish, so that the next start (a new Engine on the
// same cache) loads compiled code instead of interpreting again.
func TestTierEngineCloseFinishesCompile(t *testing.T) {
	t.Parallel()
	e, started, release := heldEngine(t)
	ctx := context.Background()
	if _, err := e.load(ctx, "shutdown", tierWasm, Limits{InterpretFirst: true, Instances: 1}, nativeWith(interruptPoll)); err != nil {
		t.Fatal(err)
	}
	<-started
	closed := make(chan error, 1)
	go func() { closed <- e.Close(ctx) }()
	// The compile is let go only once Close has said it waits for it.
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute) // a bound for a broken Close, not a pace
	defer cancel()
	said := testLogs.WaitLine(waitCtx, "finishing compiles for the cache", "plugins=[shutdown]")
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Engine.Close: %v", err)
	}
	if !said || !testLogs.LineContains("compiles finished and stored in the cache", "plugins=[shutdown]") {
		t.Error("Engine.Close did not say which compile it finished for the cache")
	}

	next, err := NewEngine(ctx, EngineOptions{CacheDir: e.CacheDir(), Logger: testEngine.log, InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close(ctx)
	m, err := next.load(ctx, "next", tierWasm, Limits{InterpretFirst: true, Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	if m.Stats().Interpreted {
		t.Error("the next start interprets: the compile did not reach the cache at Engine.Close")
	}
}

// TestTierKeepsStatefulModulesCompiled: a module loaded without
// InterpretFirst (a stateful plugin from a path, compiled before its
// first call as under its own host) loads compiled on an Engine that
// tiers, with no background compile.
func TestTierKeepsStatefulModulesCompiled(t *testing.T) {
	t.Parallel()
	e, _, _ := heldEngine(t)
	m, err := e.load(context.Background(), "stateful", tierWasm, Limits{Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if m.Stats().Interpreted {
		t.Error("a module without InterpretFirst is served by the interpreter")
	}
	if n := e.running.Load(); n != 0 {
		t.Errorf("%d background compiles; want none for a module without InterpretFirst", n)
	}
}

// TestTierKeepsState: when the compile is ready, a module that keeps
// state and has served calls keeps its interpreter instance (the count
// goes on, and the log says so) until a fault replaces it with one of
// the compiled code; a module that has served no call, or is stateless,
// moves to the compiled code. The compile is held, then let go, so the
// swap comes between known calls.
func TestTierKeepsState(t *testing.T) {
	t.Parallel()
	counter := wasmgen.Module(wasmgen.Func{Name: "count", Counter: true}, wasmgen.Func{Name: "trap", Trap: true},
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[]}`})
	for _, tc := range []struct {
		name       string
		keepsState bool
		lists      int    // list reads before the compile is ready
		before     uint32 // calls before the compile is ready
		after      uint32 // what the next call counts
		stays      bool   // the instance stays on the interpreter
		log        string
	}{
		{name: "stateful", keepsState: true, before: 3, after: 4, stays: true,
			log: "compiled code ready: the plugin keeps state in its instance, which stays on the interpreter"},
		{name: "stateful-unused", keepsState: true, before: 0, after: 1,
			log: "compiled code ready: calls move from the interpreter"},
		{name: "stateful-listed", keepsState: true, lists: 2, before: 0, after: 1,
			log: "compiled code ready: calls move from the interpreter"},
		{name: "stateful-listed-and-called", keepsState: true, lists: 2, before: 1, after: 2, stays: true,
			log: "compiled code ready: the plugin keeps state in its instance, which stays on the interpreter"},
		{name: "stateless", before: 3, after: 1,
			log: "compiled code ready: calls move from the interpreter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, started, release := heldEngine(t)
			ctx := context.Background()
			name := "keep-" + tc.name
			m, err := e.load(ctx, name, counter, Limits{InterpretFirst: true, KeepsState: tc.keepsState, Instances: 1}, nativeWith(interruptPoll))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(ctx)
			<-started
			count := func(when string) uint32 {
				t.Helper()
				out, err := m.Call(ctx, "count", nil)
				if err != nil || len(out) != 4 {
					t.Fatalf("count %s: got %x, %v; want 4 bytes", when, out, err)
				}
				return binary.LittleEndian.Uint32(out)
			}
			for range tc.lists {
				if out, err := m.Call(ctx, abi.ExportListTools, nil); err != nil || string(out) != `{"tools":[]}` {
					t.Fatalf("list_tools: got %q, %v", out, err)
				}
			}
			for i := range tc.before {
				if got := count("on the interpreter"); got != i+1 {
					t.Fatalf("count on the interpreter: got %d; want %d", got, i+1)
				}
			}
			close(release)
			if err := e.waitCompiles(ctx); err != nil {
				t.Fatal(err)
			}
			if !testLogs.LineContains(tc.log, "plugin="+name) {
				t.Errorf("no log line %q for plugin=%s", tc.log, name)
			}
			if got := count("after the compile"); got != tc.after {
				t.Errorf("count after the compile: got %d; want %d", got, tc.after)
			}
			if got := m.Stats().Interpreted; got != tc.stays {
				t.Errorf("Stats.Interpreted after the compile: got %v; want %v", got, tc.stays)
			}
			if !tc.stays {
				return
			}
			// A fault replaces the instance: its replacement is compiled
			// code, and the interpreter retires.
			if _, err := m.Call(ctx, "trap", nil); callErr(t, err).Kind != KindTrap {
				t.Fatalf("trap: got %v; want a trap", err)
			}
			if got := count("after the fault"); got != 1 {
				t.Errorf("count after the fault: got %d; want 1 (a fresh instance)", got)
			}
			m.mu.Lock()
			compiled, old := m.idle[0].be == m.be, m.old
			m.mu.Unlock()
			if !compiled || old != nil || m.Stats().Interpreted {
				t.Errorf("after the fault: instance compiled %v, interpreter retired %v, interpreted %v; want true, true, false",
					compiled, old == nil, m.Stats().Interpreted)
			}
		})
	}
}

// TestTierKeepsStateUnderCalls: callers keep a stateful module's one
// instance busy while its compile ends; every count comes once, 1 to n
// with none missing, so no call ran on a fresh instance, and the
// instance is still the interpreter's.
func TestTierKeepsStateUnderCalls(t *testing.T) {
	t.Parallel()
	e, started, release := heldEngine(t)
	ctx := context.Background()
	m, err := e.load(ctx, "keep-hammer", wasmgen.Module(wasmgen.Func{Name: "count", Counter: true}),
		Limits{InterpretFirst: true, KeepsState: true, Instances: 1}, nativeWith(interruptPoll))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	<-started
	var mu sync.Mutex
	seen := map[uint32]bool{}
	count := func() {
		out, err := m.Call(ctx, "count", nil)
		if err != nil || len(out) != 4 {
			t.Errorf("count: got %x, %v", out, err)
			return
		}
		n := binary.LittleEndian.Uint32(out)
		mu.Lock()
		defer mu.Unlock()
		if seen[n] {
			t.Errorf("count %d came twice: the instance started over", n)
		}
		seen[n] = true
	}
	stop := callAll(4, count)
	close(release) // the compile ends while calls run
	if err := e.waitCompiles(ctx); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		count()
	}
	stop()
	for n := uint32(1); n <= uint32(len(seen)); n++ {
		if !seen[n] {
			t.Fatalf("count %d never came among %d calls", n, len(seen))
		}
	}
	if s := m.Stats(); !s.Interpreted || s.Discarded != 0 || s.Instances != 1 {
		t.Errorf("stats %+v; want the one interpreter instance, none discarded", s)
	}
}

// callAll runs call in a loop on n goroutines and returns once each has
// made one call; stop ends the loops and waits for them.
func callAll(n int, call func()) (stop func()) {
	done := make(chan struct{})
	running := make(chan struct{}, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() { // ends at stop
			defer wg.Done()
			for i := 0; ; i++ {
				call()
				if i == 0 {
					running <- struct{}{}
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	for range n {
		<-running
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// TestTierCompileWaitsForLoads: a background compile does not start
// while a load runs (Engine.Loading, held here as the loader holds it
// while a plugin is listed, or another Load), so that a first start's
// loads are not slowed by the compiles they leave behind; it runs once
// the loads end.
func TestTierCompileWaitsForLoads(t *testing.T) {
	t.Parallel()
	e, err := NewEngine(context.Background(), EngineOptions{CacheDir: filepath.Join(t.TempDir(), "cache"),
		Logger: testEngine.log, InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	started := make(chan struct{}, 1)
	e.holdCompile = func(context.Context) { started <- struct{}{} }
	ctx := context.Background()
	done := e.Loading()
	m, err := e.Load(ctx, "first", tierWasm, Limits{InterpretFirst: true, Instances: 1})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer m.Close(ctx)
	<-started // the compile goroutine runs: it waits for its turn
	// A whole Load of other code (compiled in the foreground) runs
	// meanwhile; the first module's compile still waits.
	other, err := e.Load(ctx, "other", wasmgen.Module(wasmgen.Func{Name: "bye", Output: "bye"}), Limits{Instances: 1})
	if err != nil {
		t.Fatalf("Load other: %v", err)
	}
	defer other.Close(ctx)
	select {
	case <-m.compileDone:
		t.Fatal("the background compile ran while a load was marked running")
	default:
	}
	if !m.Stats().Interpreted {
		t.Fatal("Stats.Interpreted: got false while a load was marked running; want true")
	}
	done()
	done() // a second call is harmless
	<-m.compileDone
	if m.Stats().Interpreted {
		t.Error("Stats.Interpreted: got true once the loads ended and the compile ran; want false")
	}
	out, err := m.Call(ctx, "hello", nil)
	if err != nil || string(out) != "hello" {
		t.Errorf("call on the compiled code: got %q, %v; want hello", out, err)
	}
}

// TestTierOpenModuleCompilesFirst: when the loads end, the compile of a
// module still open (one a client calls) runs before that of a module
// already closed (listed only, its code compiled for the next load).
func TestTierOpenModuleCompilesFirst(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e, err := NewEngine(context.Background(), EngineOptions{CacheDir: filepath.Join(t.TempDir(), "cache"),
		Logger: slog.New(slog.NewTextHandler(logs, nil)), InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.turns = 1 // the two compiles contend for it
	ctx := context.Background()
	done := e.Loading()
	lim := Limits{InterpretFirst: true, Instances: 1}
	listed, err := e.Load(ctx, "listed", wasmgen.Module(wasmgen.Func{Name: "a", Output: "a"}), lim)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	listed.Close(ctx)
	called, err := e.Load(ctx, "called", wasmgen.Module(wasmgen.Func{Name: "b", Output: "b"}), lim)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer called.Close(ctx)
	e.mu.Lock()
	for e.openWaiting == 0 { // the open module's compile waits for its turn
		e.turn.Wait()
	}
	e.mu.Unlock()
	done()
	<-called.compileDone
	<-listed.compileDone
	// Each logs as its compile ends, before the next one's turn.
	logs.mu.Lock()
	out := logs.buf.String()
	logs.mu.Unlock()
	first, second := strings.Index(out, "plugin=called"), strings.Index(out, "plugin=listed")
	if first < 0 || second < 0 || first > second {
		t.Errorf("compiles ended in this order (log):\n%s\nwant the open module's (called) first", out)
	}
	if called.Stats().Interpreted {
		t.Error("Stats.Interpreted of the open module: got true after its compile; want false")
	}
}

// TestTierLoadStopsClosedCompile: a load that begins while the compile of
// a closed module (listed only, compiled for later) runs stops it, and
// the compile runs again, to the end, once the loads end.
func TestTierLoadStopsClosedCompile(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e, err := NewEngine(context.Background(), EngineOptions{CacheDir: filepath.Join(t.TempDir(), "cache"),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	turns := make(chan context.Context, 2)
	proceed := make(chan struct{})
	e.turnTaken = func(ctx context.Context) {
		turns <- ctx
		<-proceed
	}
	ctx := context.Background()
	m, err := e.Load(ctx, "listed", tierWasm, Limits{InterpretFirst: true, Instances: 1})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	m.Close(ctx)
	first := <-turns // its compile has the turn
	done := e.Loading()
	<-first.Done() // the load stopped it
	proceed <- struct{}{}
	done()
	second := <-turns // its next turn, once the load ended
	if second.Err() != nil {
		t.Fatalf("second turn: context already done: %v", second.Err())
	}
	close(proceed)
	<-m.compileDone
	if !logs.Contains("background compile stopped for a load") || !logs.LineContains("compile finished and stored in the cache after the module closed", "plugin=listed") {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		t.Errorf("log:\n%s\nwant the compile stopped for the load, then finished", logs.buf.String())
	}
}
