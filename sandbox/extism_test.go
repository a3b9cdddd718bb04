package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// The Extism Go SDK (go-sdk v1.7.1) is the reference the native kernel is
// tested against: runDiff loads every guest on both and compares what a
// caller sees. It lives only in tests; the binary runs the native kernel.
//
// Where go-sdk is unsafe the native kernel differs on purpose, and no
// differential case covers it: input_load_u64 past the input returns 0
// (go-sdk reads kernel memory), and outbound HTTP is checked at dial time
// on the address dialled, redirects included (go-sdk checks the first URL's
// name and follows redirects with http.DefaultClient).

// oracle names the go-sdk backend in tests (loadOn, runDiff, benchmarks).
const oracle = "extism"

// backendFor returns the constructor of the runtime a test names:
// RuntimeNative (with the loop poll) or oracle.
func backendFor(rt string) newBackend {
	if rt == oracle {
		return newExtismBackend
	}
	return nativeWith(interruptPoll)
}

// wasiOutputEnv makes go-sdk send every guest's stdout to os.Stdout,
// overriding our capture.
const wasiOutputEnv = "EXTISM_ENABLE_WASI_OUTPUT"

// extismLogLevel sets go-sdk's log level, which is process-wide and Off by
// default, once: to Info, so that guest log_info and above reach our
// logger.
var extismLogLevel = sync.OnceFunc(func() { extism.SetLogLevel(extism.LogLevelInfo) })

// extismBackend runs a module on the Extism Go SDK.
type extismBackend struct {
	cp   *extism.CompiledPlugin
	code *compiled
	lim  Limits
	log  *slog.Logger
}

func newExtismBackend(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, _ string, lim Limits, log *slog.Logger) (backend, map[string]signature, error) {
	sigs, code, err := compile(ctx, rc, wasm)
	if err != nil {
		return nil, nil, err
	}
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{
			MaxPages: lim.MemoryPages,
			// HTTP bodies are copied into kernel memory; keep them well
			// inside it (go-sdk writes at offset 0 when alloc fails).
			MaxHttpResponseBytes: maxHTTPBytes(lim),
			MaxVarBytes:          maxVarBytes,
		},
		Config:       lim.Config,
		AllowedHosts: lim.AllowedHosts,
	}
	// manifest.AllowedPaths stays empty: go-sdk would mount wazero's DirFS,
	// which follows symlinks out of the mount, and would replace the
	// ModuleConfig's FSConfig (mountFS, set by Engine.load).
	extismLogLevel()
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		EnableWasi:                true,
		RuntimeConfig:             rc,
		EnableHttpResponseHeaders: true,
	}, append(hostFunctions(log, lim), append(ioFallback(), callStatus())...))
	if err != nil {
		code.release(1)
		return nil, nil, &LoadError{Stage: "compile", Err: err}
	}
	return &extismBackend{cp: cp, code: code, lim: lim, log: log}, sigs, nil
}

var errWASIOutput = errors.New(wasiOutputEnv + " is set: go-sdk would write guest stdout to the process's stdout")

func (b *extismBackend) instantiate(ctx context.Context, mc wazero.ModuleConfig) (guest, error) {
	// go-sdk reads the variable in every Instance and then replaces our
	// stdout capture with os.Stdout.
	if _, ok := os.LookupEnv(wasiOutputEnv); ok {
		return nil, errWASIOutput
	}
	p, err := b.cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, err
	}
	log := b.log
	p.SetLogger(func(level extism.LogLevel, msg string) {
		log.LogAttrs(context.Background(), slogLevel(level), "guest log", slog.String("text", msg))
	})
	return &extismGuest{p: p}, nil
}

func (b *extismBackend) close(ctx context.Context, drained bool) error {
	err := b.cp.Close(ctx)
	if drained {
		b.code.release(2)
	}
	return err
}

// extismGuest is one go-sdk Plugin (guest module plus its own Extism
// kernel).
type extismGuest struct {
	p *extism.Plugin
}

func (g *extismGuest) call(ctx context.Context, export string, input []byte) (uint32, []byte, error) {
	return g.p.CallWithContext(ctx, export, input)
}

func (g *extismGuest) guestError() string { return g.p.GetError() }

func (g *extismGuest) close() {
	// Background: closing must not be skipped because a call's ctx ended.
	g.p.Close(context.Background())
}

func slogLevel(l extism.LogLevel) slog.Level {
	switch l {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		return slog.LevelDebug
	case extism.LogLevelInfo:
		return slog.LevelInfo
	case extism.LogLevelWarn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// compiled is our own reference to the module's compiled code in the
// cache's in-memory engine, which is shared by all runtimes of the Engine
// and reference-counted per CompileModule.
type compiled struct {
	cm   wazero.CompiledModule
	once sync.Once
}

// release drops n references: ours, plus go-sdk's when it compiled the
// module too. go-sdk's CompiledPlugin.Close closes its runtime but never its
// CompiledModule. Call it only when no instance of the module can run.
func (c *compiled) release(n int) {
	c.once.Do(func() {
		for range n {
			c.cm.Close(context.Background())
		}
	})
}

// compile compiles wasm in a throwaway runtime with the same configuration
// and cache as go-sdk's, to learn the types of its exports (go-sdk exposes
// only their names). The code stays referenced in the shared in-memory
// engine, so go-sdk's own compilation right after is a cache hit.
func compile(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte) (map[string]signature, *compiled, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	// Closing a runtime leaves its compiled modules alone.
	defer rt.Close(context.Background())
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, nil, err
	}
	sigs := make(map[string]signature)
	for name, def := range cm.ExportedFunctions() {
		sigs[name] = signature{params: def.ParamTypes(), results: def.ResultTypes()}
	}
	return sigs, &compiled{cm: cm}, nil
}

// hostFunctions returns the host functions given to every go-sdk instance
// of one module; log already carries the plugin attribute.
func hostFunctions(log *slog.Logger, lim Limits) []extism.HostFunction {
	fns := make([]extism.HostFunction, 0, len(abi.HostFuncs))
	for _, af := range abi.HostFuncs {
		h := hostFunc(af)
		var params, results []extism.ValueType
		if h.Payload {
			params = []extism.ValueType{extism.ValueTypePTR}
		}
		if h.Reply {
			results = []extism.ValueType{extism.ValueTypePTR}
		}
		f := extism.NewHostFunctionWithStack(h.Name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			var payload []byte
			var perr error
			if h.Payload && stack[0] != 0 {
				payload, perr = p.ReadBytes(stack[0])
			}
			if reply := h.serve(ctx, log, lim, payload, perr); h.Reply {
				stack[0] = writeBlock(p, reply)
			}
		}, params, results)
		f.SetNamespace(userModule)
		fns = append(fns, f)
	}
	return fns
}

// writeBlock copies b into a new go-sdk kernel block and returns its offset, or 0
// when the kernel is out of memory (its alloc returns 0, which go-sdk's
// WriteBytes would then write over).
func writeBlock(p *extism.CurrentPlugin, b []byte) uint64 {
	off, err := p.Alloc(uint64(len(b)))
	if err != nil || off == 0 {
		return 0
	}
	if !p.Memory().Write(uint32(off), b) {
		return 0
	}
	return off
}

// ioFallback defines abi.IORead and abi.IOWrite for go-sdk, whose host functions
// cannot reach the guest's memory: read answers -1 and write 0, "not
// supported", and the guest falls back to the 8-byte kernel calls.
func ioFallback() []extism.HostFunction {
	read := extism.NewHostFunctionWithStack(abi.IORead, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = api.EncodeI32(-1)
	}, []extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI32, extism.ValueTypeI32}, []extism.ValueType{extism.ValueTypeI32})
	write := extism.NewHostFunctionWithStack(abi.IOWrite, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = 0
	}, []extism.ValueType{extism.ValueTypeI32, extism.ValueTypeI32}, []extism.ValueType{extism.ValueTypeI64})
	read.SetNamespace(ioModule)
	write.SetNamespace(ioModule)
	return []extism.HostFunction{read, write}
}

// callStatus defines abi.CallCancelled for go-sdk as the kernel does: 1
// once the call's context is done. go-sdk closes its instance at that
// moment, so the guest seldom hears it; there is no grace on go-sdk.
func callStatus() extism.HostFunction {
	f := extism.NewHostFunctionWithStack(abi.CallCancelled, func(ctx context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = 0
		if requestEnded(ctx) {
			s[0] = 1
		}
	}, nil, []extism.ValueType{extism.ValueTypeI32})
	f.SetNamespace(callModule)
	return f
}
