package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptrace"
	"os"
	"sync"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// wasiOutputEnv makes go-sdk send every guest's stdout to os.Stdout,
// overriding our capture.
const wasiOutputEnv = "EXTISM_ENABLE_WASI_OUTPUT"

// extismLogLevel sets go-sdk's log level, which is process-wide and Off by
// default, once: to Info, so that guest log_info and above reach our
// logger. It is the one piece of go-sdk's global state we touch, and only
// when a module runs on it.
var extismLogLevel = sync.OnceFunc(func() { extism.SetLogLevel(extism.LogLevelInfo) })

// extismBackend runs a module on the Extism Go SDK.
type extismBackend struct {
	cp   *extism.CompiledPlugin
	code *compiled
	lim  Limits
	log  *slog.Logger
}

func newExtismBackend(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, lim Limits, log *slog.Logger) (*extismBackend, map[string]signature, error) {
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
	// ModuleConfig's FSConfig (mountFS, set by Engine.Load).
	extismLogLevel()
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		EnableWasi:                true,
		RuntimeConfig:             rc,
		EnableHttpResponseHeaders: true,
	}, append(hostFunctions(log, lim), ioFallback()...))
	if err != nil {
		code.release(1)
		return nil, nil, &LoadError{Stage: "compile", Err: err}
	}
	return &extismBackend{cp: cp, code: code, lim: lim, log: log}, sigs, nil
}

var errWASIOutput = errors.New(wasiOutputEnv + " is set: the extism runtime would write guest stdout to the process's stdout")

func (b *extismBackend) instantiate(ctx context.Context, mc wazero.ModuleConfig) (guest, error) {
	// go-sdk reads the variable in every Instance and then replaces our
	// stdout capture with os.Stdout; nothing in its API lets our setting
	// win, and unsetting it would change the whole process.
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
	return &extismGuest{p: p, allowed: b.lim.AllowedHosts}, nil
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
	p       *extism.Plugin
	allowed []string
}

// call runs the export. go-sdk's http_request uses http.DefaultClient,
// which follows redirects anywhere; rather than change that process-wide,
// every connection the call's requests make is checked against the
// allowed hosts (httptrace's GetConn sees each hop), and a denied one
// cancels the call, which then fails with errRedirectDenied as its cause.
func (g *extismGuest) call(ctx context.Context, export string, input []byte) (uint32, []byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(hostPort string) {
			host, _, err := net.SplitHostPort(hostPort)
			if err != nil {
				host = hostPort
			}
			if !hostAllowed(g.allowed, host) {
				cancel(fmt.Errorf("%w: %s", errRedirectDenied, host))
			}
		},
	})
	rc, out, err := g.p.CallWithContext(ctx, export, input)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, errRedirectDenied) {
		err = fmt.Errorf("%w (recovered by wazero)", cause)
	}
	return rc, out, err
}

var errRedirectDenied = errors.New("redirect is not allowed: host not in allowed_hosts")

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
// CompiledModule, so without this every distinct module ever loaded (each
// rebuild of a plugin) would keep its native code in memory until the
// Engine closes. Call it only when no instance of the module can run.
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
// engine, so go-sdk's own compilation right after is a cache hit. Compiling
// here first also keeps go-sdk from leaking a runtime when compilation
// fails.
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
