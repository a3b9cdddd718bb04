package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
)

// loadMode loads wasm into the shared Engine with the given interrupt
// mode and closes it after tb.
func loadMode(tb testing.TB, wasm []byte, lim Limits, intr interruptMode) *Module {
	tb.Helper()
	m, err := testEngine.load(context.Background(), tb.Name(), wasm, lim, nativeWith(intr))
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	tb.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// polled reports whether m's calls are stopped by the loop poll.
func polled(m *Module) bool {
	b, ok := m.be.(*nativeBackend)
	return ok && b.poll
}

var spinWasm = wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"}, wasmgen.Func{Name: "spin", Spin: true})

var modes = []struct {
	name string
	intr interruptMode
}{{"poll", interruptPoll}, {"close-on-done", interruptCloseOnDone}}

// TestTimeoutStopsSpin: on both mechanisms, a guest looping forever
// without calling the host (a WAT loop, a Go for {}) is stopped at its
// deadline with the same fault, the instance is thrown away, and the
// module serves the next call.
func TestTimeoutStopsSpin(t *testing.T) {
	t.Parallel()
	needGuest(t)
	guests := []struct {
		name, spin, ok string
		wasm           []byte
		timeout        time.Duration
	}{
		{"wat", "spin", "hello", spinWasm, 300 * time.Millisecond},
		// Load's warm-up call initialises a Go guest under the module's
		// budget, which can take most of a second under -race.
		{"go", "loop", "echo", guestWasm, 2 * time.Second},
	}
	for _, g := range guests {
		for _, mode := range modes {
			t.Run(g.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				// The first call initialises a Go guest, which can take
				// long under -race; the budget applies to the spin only.
				lim := Limits{Instances: 1, Timeout: time.Minute}
				warm := loadMode(t, g.wasm, lim, mode.intr)
				if got, want := polled(warm), mode.intr == interruptPoll; got != want {
					t.Fatalf("polled: got %v; want %v", got, want)
				}
				lim.Timeout = g.timeout
				m := loadMode(t, g.wasm, lim, mode.intr)
				start := time.Now()
				_, err := m.Call(context.Background(), g.spin, nil)
				took := time.Since(start)
				ce := callErr(t, err)
				if want := "exceeded " + g.timeout.String(); ce.Kind != KindTimeout || !errors.Is(err, ErrTimeout) || ce.Detail != want {
					t.Fatalf("got %v (kind %v); want kind %v, detail %q", err, ce.Kind, KindTimeout, want)
				}
				if took < lim.Timeout {
					t.Errorf("stopped after %v; want at least %v", took, lim.Timeout)
				}
				if s := m.Stats(); s.Discarded != 1 {
					t.Errorf("discarded: got %d; want 1", s.Discarded)
				}
				if _, err := warm.Call(context.Background(), g.ok, []byte("x")); err != nil {
					t.Errorf("next call: %v", err)
				}
			})
		}
	}
}

// TestPollCancel: the caller's cancellation interrupts a spinning guest,
// with the same fault on both mechanisms.
func TestPollCancel(t *testing.T) {
	t.Parallel()
	needGuest(t)
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			m := loadMode(t, guestWasm, Limits{Instances: 1, Timeout: time.Hour, CancelGrace: time.Millisecond}, mode.intr)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The guest announces it has started looping; then the caller
			// gives up, and the guest, which never returns, is stopped
			// after the cancel grace.
			peer := &fakePeer{onNotify: func(string) { cancel() }}
			_, err := m.Call(WithPeer(ctx, peer), "loop", nil)
			ce := callErr(t, err)
			want := context.Canceled.Error() + "; the guest did not return within the cancel grace (1ms) and was stopped"
			if ce.Kind != KindCanceled || !errors.Is(err, ErrCanceled) || ce.Detail != want {
				t.Fatalf("got %v; want kind %v, detail %q", err, KindCanceled, want)
			}
			if s := m.Stats(); s.Discarded != 1 {
				t.Errorf("discarded: got %d; want 1", s.Discarded)
			}
		})
	}
}

// TestPollInstanceNeverReused: an instance whose call was interrupted is
// closed, whatever the pool does with it.
func TestPollInstanceNeverReused(t *testing.T) {
	t.Parallel()
	m := loadMode(t, spinWasm, Limits{Instances: 1, Timeout: time.Hour}, interruptPoll)
	inst, err := m.newInstance(context.Background(), m.be)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := inst.g.Call(ctx, "spin", nil); err == nil {
		t.Fatal("spin returned without an error")
	}
	if _, _, err := inst.g.Call(context.Background(), "hello", nil); !errors.Is(err, errModuleClosed) {
		t.Errorf("call on the interrupted instance: got %v; want %v", err, errModuleClosed)
	}
	// And a call that was never interrupted leaves the globals alone.
	fresh, err := m.newInstance(context.Background(), m.be)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.close()
	for range 3 {
		if _, out, err := fresh.g.Call(context.Background(), "hello", nil); err != nil || string(out) != "hello" {
			t.Fatalf("hello: got %q, %v", out, err)
		}
	}
	p := fresh.g.(*nativeGuest).poll
	if v := p.intr[0].Get(); v != 0 {
		t.Errorf("interrupt global after plain calls: got %d; want 0", v)
	}
}

// TestPollFallback: a module the rewriter refuses (it has no memory) runs
// under close-on-done, says so in the log, and still times out.
func TestPollFallback(t *testing.T) {
	t.Parallel()
	wasm := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x05\x01\x60\x00\x01\x7f" + // type () -> i32
		"\x03\x02\x01\x00" + // one function
		"\x07\x08\x01\x04spin\x00\x00" + // export spin
		"\x0a\x0b\x01\x09\x00\x03\x40\x0c\x00\x0b\x41\x00\x0b") // loop br 0 end; i32.const 0
	m := loadMode(t, wasm, Limits{Instances: 1, Timeout: 200 * time.Millisecond}, interruptPoll)
	if polled(m) {
		t.Fatal("a module without memory was instrumented")
	}
	if !testLogs.Contains("loop poll unavailable") || !testLogs.Contains(looppoll.ErrNoMemory.Error()) {
		t.Error("no log line says why the loop poll is not used")
	}
	_, err := m.Call(context.Background(), "spin", nil)
	if ce := callErr(t, err); ce.Kind != KindTimeout {
		t.Fatalf("got %v; want kind %v", err, KindTimeout)
	}
}

// TestPollCacheKey: an Engine whose on-disk cache already holds a module's
// close-on-done code still runs the instrumented module with the poll, and
// the other way round: the cache never serves one for the other.
func TestPollCacheKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cache")
	for i, order := range [][]interruptMode{{interruptCloseOnDone, interruptPoll}, {interruptPoll, interruptCloseOnDone}} {
		for _, intr := range order {
			e, err := NewEngine(ctx, EngineOptions{CacheDir: fmt.Sprintf("%s%d", dir, i), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			m, err := e.load(ctx, "m", spinWasm, Limits{Instances: 1, Timeout: 200 * time.Millisecond}, nativeWith(intr))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := polled(m), intr == interruptPoll; got != want {
				t.Errorf("order %d: polled: got %v; want %v", i, got, want)
			}
			inst, err := m.newInstance(ctx, m.be)
			if err != nil {
				t.Fatal(err)
			}
			hasGlobal := inst.g.(*nativeGuest).mod.ExportedGlobal(looppoll.InterruptExport) != nil
			if hasGlobal != (intr == interruptPoll) {
				t.Errorf("order %d, mode %d: instance exports the poll's global: %v", i, intr, hasGlobal)
			}
			inst.close()
			if _, err := m.Call(ctx, "spin", nil); !errors.Is(err, ErrTimeout) {
				t.Errorf("order %d, mode %d: spin: got %v; want a timeout", i, intr, err)
			}
			e.Close(ctx)
		}
	}
}

// gcSpinMode is the child of TestPollUnderGC.
const gcSpinMode = "gc-spin"

// TestPollUnderGC spins instrumented guests (WAT and Go) while a goroutine
// forces garbage collections without pause. A guest that never leaves
// native code would stall the collector's stop-the-world, and with it
// every goroutine, timers and go test's own timeout included; so it runs
// in a child process with a hard deadline.
func TestPollUnderGC(t *testing.T) {
	t.Parallel()
	needGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		childModeEnv+"="+gcSpinMode,
		childWasmEnv+"="+filepath.Join(testDir, "testguest.wasm"),
		childCacheEnv+"="+testEngine.CacheDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("child hung and was killed: a spin stalled the garbage collector\n%s", out.String())
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
}

func gcSpinChild() int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	goWasm, err := os.ReadFile(os.Getenv(childWasmEnv))
	if err != nil {
		return fail(err)
	}
	e, err := NewEngine(ctx, EngineOptions{CacheDir: os.Getenv(childCacheEnv), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fail(err)
	}
	defer e.Close(ctx)
	var mods []*Module
	for _, wasm := range [][]byte{spinWasm, goWasm} {
		m, err := e.Load(ctx, "spin", wasm, Limits{Instances: 1, Timeout: time.Minute})
		if err != nil {
			return fail(err)
		}
		if !polled(m) {
			return fail(errors.New("module not instrumented"))
		}
		mods = append(mods, m)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // exits when stop closes
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for i, export := range [][2]string{{"spin", "hello"}, {"loop", "echo"}} {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := mods[i].Call(cctx, export[0], nil)
		cancel()
		// The caller's deadline: canceled, as under close-on-done.
		if !errors.Is(err, ErrCanceled) {
			return fail(fmt.Errorf("%s: got %v; want the call stopped at its deadline", export[0], err))
		}
		if _, err := mods[i].Call(ctx, export[1], nil); err != nil {
			return fail(fmt.Errorf("after %s: %w", export[0], err))
		}
	}
	return 0
}

// TestStartFunctionBounded: a module whose start function loops forever
// fails to load within its timeout, on both mechanisms, with a message
// that names the start function and the key; one whose start function
// returns loads and serves. Tier-up's interpreter runs the same guards.
func TestStartFunctionBounded(t *testing.T) {
	t.Parallel()
	spinStart := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"}, wasmgen.Func{Start: true, Spin: true})
	okStart := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"}, wasmgen.Func{Start: true})
	const timeout = 200 * time.Millisecond
	for _, mode := range modes {
		for _, interpret := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interpret=%v", mode.name, interpret), func(t *testing.T) {
				t.Parallel()
				lim := Limits{Instances: 1, Timeout: timeout, InterpretFirst: interpret}
				m, err := testEngine.load(context.Background(), t.Name(), spinStart, lim, nativeWith(mode.intr))
				if err == nil {
					m.Close(context.Background())
					t.Fatal("Load of a module whose start function never returns succeeded; want an error")
				}
				var le *LoadError
				if !errors.As(err, &le) || le.Stage != "instantiate" {
					t.Fatalf("Load: got %v; want a *LoadError at stage instantiate", err)
				}
				for _, want := range []string{"start function did not return within the plugin's timeout (200ms", "raise timeout"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("Load: got %q; want it to contain %q", err, want)
					}
				}
				ok := loadMode(t, okStart, Limits{Instances: 1, Timeout: time.Minute, InterpretFirst: interpret}, mode.intr)
				if out, err := ok.Call(context.Background(), "hello", nil); err != nil || string(out) != "hello" {
					t.Fatalf("call after a start function that returns: got %q, %v; want hello", out, err)
				}
			})
		}
	}
}
