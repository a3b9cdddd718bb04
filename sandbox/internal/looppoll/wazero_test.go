package looppoll

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// These tests pin the two wazero behaviours the poll relies on, observed
// in wazero v1.12.0's optimizing compiler (wazevo) and documented nowhere:
//
//  1. native code re-reads a global on every global.get, so a value set
//     from another goroutine is seen at the next loop header;
//  2. memory.grow leaves native code for Go, where the Go runtime can stop
//     the world: a guest that loops without calling the host does not
//     stall a garbage collection (and every other goroutine) until it
//     returns.
//
// If a wazero upgrade breaks either, a spinning guest is never stopped, or
// the process hangs in a GC. Both are checked in a child process with a
// hard deadline, so a regression fails the test instead of hanging it.

const childEnv = "MCPHOST_LOOPPOLL_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := child(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestWazeroHonoursThePoll(t *testing.T) {
	for _, mode := range []string{"interrupt", "interrupt-under-gc"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			// Generous: the child compiles under -race on a shared machine.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+mode)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("child hung and was killed: the spinning guest was never stopped, or a GC could not stop the world (did wazero change?)\n%s", out)
			}
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
		})
	}
}

// child spins an instrumented guest with timeouts of wazero's own off,
// interrupts it after 50 ms through the globals, and checks that the call
// ends with a trap within a second; under-gc adds a goroutine forcing
// garbage collections all along.
func child(mode string) error {
	ctx := context.Background()
	wasm, _, err := Instrument(spin(true))
	if err != nil {
		return err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if strings.HasSuffix(mode, "under-gc") {
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
	}
	timer := time.AfterFunc(50*time.Millisecond, func() {
		mod.ExportedGlobal(InterruptExport).(api.MutableGlobal).Set(1)
		mod.ExportedGlobal(CounterExport).(api.MutableGlobal).Set(0)
	})
	defer timer.Stop()
	start := time.Now()
	_, err = mod.ExportedFunction("spin").Call(ctx)
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		return fmt.Errorf("spin: got %v; want the poll's unreachable trap", err)
	}
	if took > time.Second {
		return errors.New("spin stopped only after " + took.String())
	}
	return nil
}
