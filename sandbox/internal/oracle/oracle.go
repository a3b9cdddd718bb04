package oracle

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
	"github.com/mcphost/mcphost/sandbox/internal/coreruntime"
)

// WASIOutputEnv makes go-sdk send every guest's stdout to os.Stdout,
// overriding the sandbox's capture.
const WASIOutputEnv = "EXTISM_ENABLE_WASI_OUTPUT"

// extismLogLevel sets go-sdk's log level, which is process-wide and Off by
// default, once: to Info, so that guest log_info and above reach our
// logger.
var extismLogLevel = sync.OnceFunc(func() { extism.SetLogLevel(extism.LogLevelInfo) })

// extismBackend runs a module on the Extism Go SDK.
type extismBackend struct {
	cp   *extism.CompiledPlugin
	code *compiled
	log  *slog.Logger
}

// New runs a module on the Extism Go SDK: a coreruntime.New for
// coreruntime.With.
func New(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, host coreruntime.Host) (coreruntime.Backend, map[string]coreruntime.Signature, error) {
	sigs, code, err := compile(ctx, rc, wasm)
	if err != nil {
		return nil, nil, err
	}
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{
			MaxPages: host.MemoryPages,
			// HTTP bodies are copied into kernel memory; keep them well
			// inside it (go-sdk writes at offset 0 when alloc fails).
			MaxHttpResponseBytes: host.MaxHTTPBytes,
			MaxVarBytes:          int64(host.MaxVarBytes),
		},
		Config:       host.Config,
		AllowedHosts: host.AllowedHosts,
	}
	// manifest.AllowedPaths stays empty: go-sdk would mount wazero's DirFS,
	// which follows symlinks out of the mount, and would replace the
	// ModuleConfig's FSConfig (mountFS, set by Engine.load).
	extismLogLevel()
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		EnableWasi:                true,
		RuntimeConfig:             rc,
		EnableHttpResponseHeaders: true,
	}, append(HostFunctions(host), append(ioFallback(), callStatus(host))...))
	if err != nil {
		code.release(1)
		return nil, nil, err
	}
	return &extismBackend{cp: cp, code: code, log: host.Log}, sigs, nil
}

var errWASIOutput = errors.New(WASIOutputEnv + " is set: go-sdk would write guest stdout to the process's stdout")

func (b *extismBackend) Instantiate(ctx context.Context, mc wazero.ModuleConfig) (coreruntime.Guest, error) {
	// go-sdk reads the variable in every Instance and then replaces our
	// stdout capture with os.Stdout.
	if _, ok := os.LookupEnv(WASIOutputEnv); ok {
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

func (b *extismBackend) Close(ctx context.Context, drained bool) error {
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

func (g *extismGuest) Call(ctx context.Context, export string, input []byte) (uint32, []byte, error) {
	return g.p.CallWithContext(ctx, export, input)
}

func (g *extismGuest) GuestError() string { return g.p.GetError() }

func (g *extismGuest) Close() {
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
func compile(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte) (map[string]coreruntime.Signature, *compiled, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	// Closing a runtime leaves its compiled modules alone.
	defer rt.Close(context.Background())
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, nil, err
	}
	sigs := make(map[string]coreruntime.Signature)
	for name, def := range cm.ExportedFunctions() {
		sigs[name] = coreruntime.Signature{Params: def.ParamTypes(), Results: def.ResultTypes()}
	}
	return sigs, &compiled{cm: cm}, nil
}

// HostFunctions returns the host functions of abi.HostNamespace given to
// every go-sdk instance of one module, served by host.Serve.
func HostFunctions(host coreruntime.Host) []extism.HostFunction {
	fns := make([]extism.HostFunction, 0, len(abi.HostFuncs))
	for _, h := range abi.HostFuncs {
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
			if reply := host.Serve(ctx, h, payload, perr); h.Reply {
				stack[0] = writeBlock(p, reply)
			}
		}, params, results)
		f.SetNamespace(abi.HostNamespace)
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

// ioFallback defines abi.IONamespace's functions for go-sdk, whose host
// functions cannot reach the guest's memory: each answers "not supported"
// (write 0, the others -1), and the guest falls back to the 8-byte kernel
// calls.
func ioFallback() []extism.HostFunction {
	i32, i64 := extism.ValueTypeI32, extism.ValueTypeI64
	var fs []extism.HostFunction
	for _, f := range []struct {
		name            string
		params, results []extism.ValueType
		answer          uint64
	}{
		{abi.IORead, []extism.ValueType{i64, i32, i32}, []extism.ValueType{i32}, api.EncodeI32(-1)},
		{abi.IOWrite, []extism.ValueType{i32, i32}, []extism.ValueType{i64}, 0},
		{abi.IOInput, []extism.ValueType{i32, i32}, []extism.ValueType{i64}, api.EncodeI64(-1)},
		{abi.IOOutput, []extism.ValueType{i32, i32}, []extism.ValueType{i32}, api.EncodeI32(-1)},
	} {
		h := extism.NewHostFunctionWithStack(f.name, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
			s[0] = f.answer
		}, f.params, f.results)
		h.SetNamespace(abi.IONamespace)
		fs = append(fs, h)
	}
	return fs
}

// callStatus defines abi.CallCancelled for go-sdk as the kernel does: 1
// once the call's context is done. go-sdk closes its instance at that
// moment, so the guest seldom hears it; there is no grace on go-sdk.
func callStatus(host coreruntime.Host) extism.HostFunction {
	f := extism.NewHostFunctionWithStack(abi.CallCancelled, func(ctx context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = 0
		if host.RequestEnded(ctx) {
			s[0] = 1
		}
	}, nil, []extism.ValueType{extism.ValueTypeI32})
	f.SetNamespace(abi.CallNamespace)
	return f
}
