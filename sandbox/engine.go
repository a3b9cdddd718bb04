package sandbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// wasiOutputEnv makes go-sdk send every guest's stdout to os.Stdout,
// overriding our capture; see guardWASIOutput.
const wasiOutputEnv = "EXTISM_ENABLE_WASI_OUTPUT"

// Engine compiles and runs modules. All modules of an Engine share one
// on-disk compilation cache. An Engine is safe for concurrent use.
type Engine struct {
	log   *slog.Logger
	dir   string
	cache wazero.CompilationCache

	mu      sync.Mutex
	closed  bool
	modules map[*Module]struct{}
}

var logLevelOnce sync.Once

// NewEngine opens the compilation cache in opts.CacheDir.
//
// It also makes three process-wide settings, once: it unsets
// EXTISM_ENABLE_WASI_OUTPUT (which would make go-sdk write guest stdout to
// os.Stdout, the MCP stdio channel; it is unset again before each new
// instance should anyone set it later), it sets go-sdk's global log level to
// Info (guest log_debug and log_trace are dropped), and it makes
// http.DefaultClient re-check every redirect of a plugin's http_request
// against that plugin's allowed hosts (see guardRedirects).
func NewEngine(ctx context.Context, opts EngineOptions) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	dir := opts.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("sandbox: cache dir: %w", err)
		}
		dir = filepath.Join(base, "mcphost", "wazero")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: cache dir: %w", err)
	}
	// The cache holds native code that will be executed: nobody else may
	// write there.
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: cache dir: %w", err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("sandbox: cache dir %s is writable by group or others (mode %v)", dir, fi.Mode().Perm())
	}
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: cache dir: %w", err)
	}

	guardWASIOutput(log)
	logLevelOnce.Do(func() { extism.SetLogLevel(extism.LogLevelInfo) })
	guardRedirects()

	return &Engine{log: log, dir: dir, cache: cache, modules: make(map[*Module]struct{})}, nil
}

// guardWASIOutput unsets EXTISM_ENABLE_WASI_OUTPUT. go-sdk reads it in every
// CompiledPlugin.Instance and then replaces our stdout capture with
// os.Stdout; nothing in its API lets our setting win.
func guardWASIOutput(log *slog.Logger) {
	if _, ok := os.LookupEnv(wasiOutputEnv); ok {
		os.Unsetenv(wasiOutputEnv)
		log.Warn("unset environment variable: guest output never goes to stdout", "var", wasiOutputEnv)
	}
}

// CacheDir returns the directory of the compilation cache.
func (e *Engine) CacheDir() string { return e.dir }

// Close closes every module (see [Module.Close]) and then the cache.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	mods := make([]*Module, 0, len(e.modules))
	for m := range e.modules {
		mods = append(mods, m)
	}
	e.mu.Unlock()
	var errs []error
	for _, m := range mods {
		errs = append(errs, m.Close(ctx))
	}
	errs = append(errs, e.cache.Close(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sandbox: close: %w", err)
	}
	return nil
}

// Load compiles wasm once, through the Engine's compilation cache, and
// prepares a pool of up to lim.Instances warm instances. One instance is
// created before Load returns, which proves that the module instantiates
// (its imports resolve, its memory fits); if the module exports
// abi.ExportABIVersion, Load also calls it, which runs a WASI reactor's
// _initialize (about 2.6 ms for Go) so the first real call does not pay it.
// name is used in errors and logs. Errors are *LoadError.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, lim Limits) (*Module, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, &LoadError{Module: name, Stage: "compile", Err: errors.New("engine is closed")}
	}
	lim, err := normalize(lim)
	if err != nil {
		return nil, &LoadError{Module: name, Stage: "limits", Err: err}
	}
	rc := wazero.NewRuntimeConfig().
		WithCompilationCache(e.cache).
		// Without this, a guest in an endless loop never stops.
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(lim.MemoryPages)

	sigs, code, err := compile(ctx, rc, wasm)
	if err != nil {
		stage := "compile"
		if strings.Contains(err.Error(), "over limit") {
			stage = "limits"
		}
		return nil, &LoadError{Module: name, Stage: stage, Err: err}
	}

	log := e.log.With("plugin", name)
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		Memory: &extism.ManifestMemory{
			MaxPages: lim.MemoryPages,
			// HTTP bodies are copied into kernel memory; keep them well
			// inside it (go-sdk writes at offset 0 when alloc fails).
			MaxHttpResponseBytes: int64(min(defaultMaxHTTPBytes, int(lim.MemoryPages)*pageSize/4)),
			MaxVarBytes:          1 << 20, // go-sdk's default
		},
		Config:       lim.Config,
		AllowedHosts: lim.AllowedHosts,
	}
	// manifest.AllowedPaths stays empty: go-sdk would mount wazero's DirFS,
	// which follows symlinks out of the mount, and would replace our FSConfig.
	fsc, err := mountFS(lim.AllowedPaths, e.log, name)
	if err != nil {
		code.release(1)
		return nil, &LoadError{Module: name, Stage: "limits", Err: err}
	}
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: rc,
	}, hostFunctions(log, lim))
	if err != nil {
		code.release(1)
		return nil, &LoadError{Module: name, Stage: "compile", Err: err}
	}

	mc := wazero.NewModuleConfig().
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader).
		WithFSConfig(fsc)
	keys := make([]string, 0, len(lim.Env))
	for k := range lim.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		mc = mc.WithEnv(k, lim.Env[k])
	}

	m := newModule(e, name, cp, code, mc, lim, sigs, log)
	if err := m.warm(ctx); err != nil {
		m.Close(context.Background())
		return nil, &LoadError{Module: name, Stage: "instantiate", Err: err}
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		m.Close(ctx)
		return nil, &LoadError{Module: name, Stage: "instantiate", Err: errors.New("engine is closed")}
	}
	e.modules[m] = struct{}{}
	e.mu.Unlock()
	return m, nil
}

func (e *Engine) forget(m *Module) {
	e.mu.Lock()
	delete(e.modules, m)
	e.mu.Unlock()
}

// signature is the type of one exported function.
type signature struct {
	params, results []api.ValueType
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
