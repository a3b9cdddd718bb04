package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/sandbox/internal/oracle"
)

// The stdout test re-runs the test binary as a child whose whole stdout it
// can inspect; TestMain hands such a child to stdoutChild.
const (
	childModeEnv  = "MCPHOST_SANDBOX_TEST_CHILD"
	childWasmEnv  = "MCPHOST_SANDBOX_TEST_WASM"
	childCacheEnv = "MCPHOST_SANDBOX_TEST_CACHE"
	childMarker   = "guest-stdout-marker-5e1d"
)

// TestGuestStdoutNeverReachesProcessStdout runs the guest's "print" export
// (which writes to its WASI stdout) in a child process started with
// EXTISM_ENABLE_WASI_OUTPUT set. Under plain go-sdk (the control) the text
// lands on the process's stdout; under the sandbox it never does, and it is
// logged instead.
func TestGuestStdoutNeverReachesProcessStdout(t *testing.T) {
	t.Parallel()
	needGuest(t)
	tests := []struct {
		mode         string
		wantOnStdout bool
	}{
		{"raw-go-sdk", true},
		{"sandbox", false},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(),
				childModeEnv+"="+tc.mode,
				childWasmEnv+"="+filepath.Join(testDir, "testguest.wasm"),
				childCacheEnv+"="+testEngine.CacheDir(),
				oracle.WASIOutputEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("child: %v\nstderr:\n%s", err, stderr.String())
			}
			if got := strings.Contains(stdout.String(), childMarker); got != tc.wantOnStdout {
				t.Errorf("guest text on process stdout: got %v; want %v\nstdout: %q", got, tc.wantOnStdout, stdout.String())
			}
			if !tc.wantOnStdout && !strings.Contains(stderr.String(), "stdout:"+childMarker) {
				t.Errorf("guest stdout line not logged; child stderr:\n%s", stderr.String())
			}
		})
	}
}

func stdoutChild(mode string) int {
	ctx := context.Background()
	wasm, err := os.ReadFile(os.Getenv(childWasmEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	switch mode {
	case "raw-go-sdk":
		cache, err := wazero.NewCompilationCacheWithDir(os.Getenv(childCacheEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
			extism.PluginConfig{
				EnableWasi:    true,
				RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(true),
				ModuleConfig:  wazero.NewModuleConfig().WithStdout(io.Discard),
			}, oracle.HostFunctions(hostFor("child", Limits{}, log)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, _, err := p.Call("print", []byte(childMarker)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "sandbox":
		e, err := NewEngine(ctx, EngineOptions{CacheDir: os.Getenv(childCacheEnv), Logger: log})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer e.Close(ctx)
		// Set again after NewEngine: every new instance must still be safe.
		os.Setenv(oracle.WASIOutputEnv, "1")
		m, err := e.Load(ctx, "child", wasm, Limits{Instances: 1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := m.Call(ctx, "print", []byte(childMarker)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown child mode", mode)
		return 1
	}
	return 0
}
