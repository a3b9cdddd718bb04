package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// loadConfig reads --config, or ./plugins.toml when present, or the
// built-in defaults (no plugins).
func loadConfig(path string, log *slog.Logger) (*config.Config, error) {
	if path == "" {
		if _, err := os.Stat("plugins.toml"); err == nil {
			path = "plugins.toml"
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if path == "" {
		log.Warn("no plugins.toml here and no --config given: serving the built-in defaults (no plugins)")
		return config.DefaultConfig(), nil
	}
	return plugins.LoadConfig(path)
}

// pluginRuntime is what every subcommand that loads plugins needs.
type pluginRuntime struct {
	engine *sandbox.Engine
	loader *plugins.Loader
}

// newLoader returns a loader on r's engine that logs to log and tells obs
// (when not nil) about tool calls and asks for consent with grants (when
// not nil; serve), and keeps plugin state in st, named stName in errors
// (nil: an in-process store of its own). With lazy, plugins found in the list
// cache are listed from it and compiled on first use (serve); the author
// commands load every plugin at once, so that they report what loading
// finds.
func (r *pluginRuntime) newLoader(log *slog.Logger, obs plugins.Observer, lazy bool, grants *consent.Grants, st store.Store, stName string) *plugins.Loader {
	cache := cacheRoot()
	opts := plugins.LoaderOptions{Engine: r.engine, BuildCacheDir: buildCacheDir(),
		DownloadCacheDir: filepath.Join(cache, "download"), Logger: log, Observer: obs,
		CacheMax: source.DefaultCacheMax, CacheDirs: []string{r.engine.CacheDir()}, Grants: grants,
		Store: st, StoreName: stName}
	if lazy {
		opts.ListCacheDir = listCacheDir()
	}
	return plugins.NewLoader(opts)
}

// listCacheDir holds what each plugin listed, for warm starts.
func listCacheDir() string { return filepath.Join(cacheRoot(), "lists") }

// buildCacheDir holds Go-source builds and the extracted SDK.
func buildCacheDir() string { return filepath.Join(cacheRoot(), "gobuild") }

func newPluginRuntime(ctx context.Context, log *slog.Logger, tr trace.Tracer, interpret bool) (*pluginRuntime, error) {
	eng, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(cacheRoot(), "wazero"), Logger: log, Tracer: tr, Propagator: host.Propagator,
		InterpretUntilCompiled: interpret, KeepPrepared: true})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	r := &pluginRuntime{engine: eng}
	r.loader = r.newLoader(log, nil, false, nil, nil, "")
	return r, nil
}

func (r *pluginRuntime) close(ctx context.Context) { _ = r.engine.Close(ctx) }

// setup is what every subcommand that loads plugins starts with: the
// logger its flags ask for, the config, and the engine with its loader.
// The caller closes the last.
func (c *common) setup(ctx context.Context, stderr io.Writer) (*slog.Logger, *config.Config, *pluginRuntime, error) {
	log, err := c.logger(stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := loadConfig(c.config, log)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := newPluginRuntime(ctx, log, c.tracer, c.interpret)
	if err != nil {
		return nil, nil, nil, err
	}
	return log, cfg, rt, nil
}

// Build loads cfg's plugins with the engine, caches and loader every
// subcommand uses, for callers that serve them in-process (the
// benchmarks). The caller swaps the generation into a registry and calls
// close when done with it.
func Build(ctx context.Context, log *slog.Logger, cfg *config.Config) (g *plugins.Generation, close func(context.Context), err error) {
	rt, err := newPluginRuntime(ctx, log, nil, false)
	if err != nil {
		return nil, nil, err
	}
	g, err = rt.loader.Build(ctx, cfg, nil)
	if err != nil {
		rt.close(ctx)
		return nil, nil, err
	}
	return g, rt.close, nil
}
