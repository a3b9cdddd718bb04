package differential

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox"
)

var (
	testDir    string
	testEngine *sandbox.Engine
	testGuest  = &wasmgen.GoGuest{Pkg: "../../testdata/testguest"}
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sandbox-differential-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testDir = dir
	// Debug, so that every guest log call is served on every runtime.
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	testEngine, err = sandbox.NewEngine(context.Background(), sandbox.EngineOptions{CacheDir: filepath.Join(dir, "cache"), Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testEngine.Close(context.Background())
	return m.Run()
}

// guest builds g the first time; a test whose guest does not build is
// skipped, with the build's error.
func guest(tb testing.TB, g *wasmgen.GoGuest) []byte {
	tb.Helper()
	wasm, err := g.Build(testDir)
	if err != nil {
		tb.Skipf("test guest %s unavailable: %v", g.Pkg, err)
	}
	return wasm
}
