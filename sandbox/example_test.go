package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox"
)

// An Engine compiles a module once (caching the native code on disk) and
// serves its calls from a pool of instances, each call bounded by the
// module's Limits. Every failure is a *sandbox.CallError whose Kind says
// what went wrong: here a guest that loops forever is stopped at its
// timeout, and the next call gets a fresh instance.
func ExampleEngine() {
	ctx := context.Background()
	cache, err := os.MkdirTemp("", "mcphost-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(cache)
	e, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{
		CacheDir: cache,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	defer e.Close(ctx)

	// A tiny Extism-ABI module, assembled in place: "greet" sets its
	// output, "spin" never returns.
	wasm := wasmgen.Module(
		wasmgen.Func{Name: "greet", Output: "hello from wasm"},
		wasmgen.Func{Name: "spin", Spin: true},
	)
	m, err := e.Load(ctx, "greeter", wasm, sandbox.Limits{Timeout: 50 * time.Millisecond, Instances: 1})
	if err != nil {
		panic(err)
	}
	defer m.Close(ctx)

	out, err := m.Call(ctx, "greet", nil)
	fmt.Printf("%s, %v\n", out, err)

	_, err = m.Call(ctx, "spin", nil)
	var ce *sandbox.CallError
	if errors.As(err, &ce) {
		fmt.Println(ce.Export+":", ce.Kind)
	}

	out, err = m.Call(ctx, "greet", nil)
	fmt.Printf("%s, %v\n", out, err)
	// Output:
	// hello from wasm, <nil>
	// spin: timeout
	// hello from wasm, <nil>
}
