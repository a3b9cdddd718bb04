package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/sandbox/internal/extism"
	"github.com/mcphost/mcphost/sandbox/internal/guestmem"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
)

// Import modules a guest may use.
const (
	envModule  = extism.EnvModule
	wasiModule = wasi_snapshot_preview1.ModuleName
)

// nativeBackend runs a module on our own implementation of the Extism
// kernel (extism:host/env), in one wazero runtime per module: WASI, the
// kernel and the host functions are instantiated once in it, and each
// instance is an anonymous instance of the one compiled guest.
type nativeBackend struct {
	rt     wazero.Runtime
	cm     wazero.CompiledModule
	lim    Limits
	log    *slog.Logger
	client *http.Client
	// init is the guest runtime's initialiser, run once per instance
	// before its first call, as go-sdk does: _initialize (WASI reactors),
	// else __wasm_call_ctors; hsInit adds Haskell's hs_init after it.
	init   string
	hsInit bool

	// poll says the guest was instrumented (compileNative): calls are
	// stopped through each instance's poll, and running ones, listed in
	// live, when the backend closes.
	poll bool
	live livePolls
}

// nativeWith returns the constructor of native backends whose calls are
// stopped the way intr says.
func nativeWith(intr interruptMode) newBackend {
	return func(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, name string, lim Limits, log *slog.Logger) (backend, map[string]signature, error) {
		return newNativeBackend(ctx, rc, wasm, name, lim, intr, log)
	}
}

// newNativeBackend compiles wasm once (through the Engine's cache) in a new
// runtime configured by rc, and instantiates what the guest imports.
func newNativeBackend(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, name string, lim Limits, intr interruptMode, log *slog.Logger) (backend, map[string]signature, error) {
	rt, cm, poll, err := compileNative(ctx, rc, wasm, intr, log)
	if err != nil {
		return nil, nil, err
	}
	b := &nativeBackend{rt: rt, cm: cm, lim: lim, log: log, client: newEgress(name, lim, log).client(), poll: poll}
	fail := func(err error) (backend, map[string]signature, error) {
		b.Close(ctx, true)
		return nil, nil, err
	}
	imports := make(map[string]bool)
	for _, def := range cm.ImportedFunctions() {
		mod, _, _ := def.Import()
		imports[mod] = true
	}
	// Instantiated only when imported: a small guest then pays for nothing
	// it does not use.
	if imports[wasiModule] {
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			return fail(fmt.Errorf("wasi: %w", err))
		}
	}
	if imports[envModule] {
		if _, err := envHostModule(rt.NewHostModuleBuilder(envModule), b).Instantiate(ctx); err != nil {
			return fail(fmt.Errorf("kernel: %w", err))
		}
	}
	if imports[userModule] {
		if _, err := userHostModule(rt.NewHostModuleBuilder(userModule), log, lim).Instantiate(ctx); err != nil {
			return fail(fmt.Errorf("host functions: %w", err))
		}
	}
	if imports[callModule] {
		if _, err := callHostModule(rt.NewHostModuleBuilder(callModule)).Instantiate(ctx); err != nil {
			return fail(fmt.Errorf("call status: %w", err))
		}
	}
	if imports[extism.IOModule] {
		if _, err := ioHostModule(rt.NewHostModuleBuilder(extism.IOModule)).Instantiate(ctx); err != nil {
			return fail(fmt.Errorf("bulk i/o: %w", err))
		}
	}
	sigs := make(map[string]signature)
	for name, def := range cm.ExportedFunctions() {
		sigs[name] = signature{params: def.ParamTypes(), results: def.ResultTypes()}
	}
	if _, ok := sigs["hs_init"]; ok {
		b.hsInit = true
	}
	for _, name := range []string{"_initialize", "__wasm_call_ctors"} {
		if s, ok := sigs[name]; ok && len(s.params) == 0 && len(s.results) == 0 {
			b.init = name
			break
		}
	}
	return b, sigs, nil
}

func (b *nativeBackend) Instantiate(ctx context.Context, mc wazero.ModuleConfig) (guest, error) {
	g := &nativeGuest{b: b, k: extism.NewKernel(int(b.lim.MemoryPages) * pageSize), fns: make(map[string]guestFn)}
	// No start functions: a reactor's initialiser runs before the first
	// call, inside that call's time budget.
	mctx, mems := guestmem.With(ctx)
	mod, err := b.rt.InstantiateModule(&callContext{Context: mctx, g: g}, b.cm, mc.WithName("").WithStartFunctions())
	guestmem.UnmapWith(g, mems) // every call goes through g
	if err != nil {
		return nil, err
	}
	g.mod = mod
	if b.poll {
		if g.poll, err = newPoll(mod); err != nil {
			mod.Close(ctx)
			return nil, err
		}
		b.live.add(g.poll)
		if start := mod.ExportedFunction(looppoll.StartExport); start != nil {
			cctx := &callContext{Context: ctx, g: g}
			if err := runStart(cctx, g.poll, func() error { _, err := start.Call(cctx); return err }); err != nil {
				g.Close()
				return nil, err
			}
		}
	}
	return g, nil
}

// close closes the runtime, which stops every instance still running;
// drained says none is, so the compiled code can be released too.
func (b *nativeBackend) Close(ctx context.Context, drained bool) error {
	// Closing the runtime does not stop an instrumented guest; its poll
	// does.
	b.live.interruptAll()
	err := b.rt.Close(ctx)
	if drained {
		// The cache's in-memory engine is shared by all runtimes: closing
		// a runtime does not release the code it compiled.
		err = errors.Join(err, b.cm.Close(ctx))
	}
	b.client.CloseIdleConnections()
	return err
}

// nativeGuest is one instance of a native module. It serves one call at a
// time.
type nativeGuest struct {
	b           *nativeBackend
	mod         api.Module
	k           extism.Kernel
	fns         map[string]guestFn
	stack       [1]uint64
	poll        *poll // nil unless the backend's guest is instrumented
	cc          callContext
	initialized bool
	lastError   string

	vars    extism.Vars
	status  int32
	headers []byte // JSON of the last response's headers
}

// kernelKey finds the guest of the call being served in a host
// function's ctx.
type kernelKey struct{}

// callContext carries the guest to the host functions of one call. It is
// immutable under close-on-done, whose timeout goroutine may read it after
// the call; a polled guest reuses its own.
type callContext struct {
	context.Context
	g *nativeGuest
}

func (c *callContext) Value(key any) any {
	if key == (kernelKey{}) {
		return c.g
	}
	return c.Context.Value(key)
}

var errNoKernel = errors.New("extism kernel function called outside a call")

// guestOf returns the guest whose call ctx serves; it panics, which wazero
// turns into a failed call, when there is none.
func guestOf(ctx context.Context) *nativeGuest {
	if c, ok := ctx.(*callContext); ok {
		return c.g
	}
	g, ok := ctx.Value(kernelKey{}).(*nativeGuest)
	if !ok {
		panic(errNoKernel)
	}
	return g
}

func (g *nativeGuest) fn(name string) api.Function { return g.export(name).f }

// guestFn is an export of an instance and how many results it returns
// (wazero's ResultTypes allocates each time it is asked).
type guestFn struct {
	f    api.Function // nil: no such export
	nres int
}

func (g *nativeGuest) export(name string) guestFn {
	gf, ok := g.fns[name]
	if !ok {
		if f := g.mod.ExportedFunction(name); f != nil {
			gf = guestFn{f: f, nres: len(f.Definition().ResultTypes())}
		}
		g.fns[name] = gf
	}
	return gf
}

// call has the semantics of go-sdk's Plugin.CallWithContext: the kernel
// is reset and given the input; the runtime is initialised on the first
// call; proc_exit(0) is a success; a message from error_set makes the call
// fail whatever it returned.
func (g *nativeGuest) Call(ctx context.Context, export string, input []byte) (uint32, []byte, error) {
	if g.mod.IsClosed() {
		return 0, nil, errModuleClosed
	}
	g.lastError = ""
	k := &g.k
	k.Reset()
	defer k.Reset()
	if !k.SetInput(input) {
		return 1, nil, fmt.Errorf("input of %d bytes does not fit in the kernel's memory", len(input))
	}
	gf := g.export(export)
	f := gf.f
	if f == nil {
		return 1, nil, fmt.Errorf("unknown function: %s", export)
	}
	var cctx *callContext
	if g.poll != nil {
		// Close-on-done is off, so nothing reads it after the call:
		// the guest's own serves every call.
		g.cc = callContext{Context: ctx, g: g}
		cctx = &g.cc
		g.poll.arm(ctx)
	} else {
		cctx = &callContext{Context: ctx, g: g}
	}
	var initErr, err error
	if !g.initialized && export != "_initialize" && export != "_start" {
		if initErr = g.initialize(cctx); initErr == nil {
			g.initialized = true
		}
	}
	if initErr == nil {
		err = f.CallWithStack(cctx, g.stack[:])
	}
	if g.poll != nil {
		if code := g.poll.disarm(ctx); code != 0 {
			// Stopped wherever it was, with its interrupt set: never
			// to be used again, even if it finished first.
			g.mod.Close(context.Background())
			initErr, err = interruptedError(code, initErr), interruptedError(code, err)
		}
	}
	if initErr != nil {
		return 1, nil, fmt.Errorf("failed to initialize runtime: %w", initErr)
	}
	var rc uint32
	switch {
	case err != nil:
		rc = 1
		// Only now: errors.As would make exit escape on every call.
		if exit := (*sys.ExitError)(nil); errors.As(err, &exit) {
			if rc = exit.ExitCode(); rc == 0 {
				err = nil
			}
		}
	case gf.nres == 1:
		rc = api.DecodeU32(g.stack[0])
	}
	if err != nil {
		return rc, nil, err
	}
	var guestErr error
	if msg := k.ErrorMessage(); msg != "" {
		g.lastError = msg
		guestErr = errors.New(msg)
	}
	return rc, k.Output(), guestErr
}

// initialize runs the guest runtime's initialiser.
func (g *nativeGuest) initialize(ctx context.Context) error {
	if g.b.init != "" {
		if err := g.fn(g.b.init).CallWithStack(ctx, g.stack[:]); err != nil && !g.b.hsInit {
			return err
		}
	}
	if g.b.hsInit {
		if f := g.fn("hs_init"); len(f.Definition().ParamTypes()) == 2 {
			_, err := f.Call(ctx, 0, 0)
			return err
		}
	}
	return nil
}

// guestError returns the message the guest's last call set with error_set.
// The kernel is reset after each call, so it is kept by call's caller.
func (g *nativeGuest) GuestError() string { return g.lastError }

func (g *nativeGuest) Close() {
	if g.poll != nil {
		g.b.live.remove(g.poll)
	}
	g.mod.Close(context.Background())
}
