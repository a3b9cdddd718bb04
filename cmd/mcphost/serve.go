package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/metrics"
	"github.com/mcphost/mcphost/host/stdio"
	"github.com/mcphost/mcphost/host/streamable"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/watch"
	"github.com/mcphost/mcphost/store"
)

// compileGrace bounds how long serve waits at exit for background
// compiles, so that the next start finds their code in the cache.
const compileGrace = 2 * time.Second

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stdout, stderr)
	var c common
	c.register(fs)
	noWatch := fs.Bool("no-watch", false, "do not watch plugins.toml and plugin files for changes")
	debounce := fs.Duration("watch-debounce", watch.DefaultDebounce, "how long changed files must stay quiet before a reload")
	auditPath := fs.String("audit-log", "", "append every message in and out to this file as JSON lines")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics at http://`host:port`/metrics, apart from MCP (off by default; a bare port binds 127.0.0.1, port 0 picks a free one)")
	eager := fs.Bool("eager", false, "compile every plugin at start; by default a plugin whose lists are in the list cache (same code, limits and config as when it last loaded) is listed from it and compiled on first use")
	debugAddr := fs.String("debug-addr", "", "serve net/http/pprof on this loopback `host:port` (for soak runs and diagnosis)")
	var hf httpFlags
	hf.register(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	tlog, err := c.logger(stderr)
	if err != nil {
		return err
	}
	tr, err := startTracing(ctx, os.Getenv, tlog)
	if err != nil {
		return err
	}
	defer tr.shutdown(tlog) // last: what closing the plugins traced goes out too
	c.tracer = tr.sandbox()
	// A saved plugin (or one whose compiled code left the cache) serves
	// from its first call; the compiled code takes over when it is ready.
	c.interpret = true
	log, cfg, rt, err := c.setup(ctx, stderr)
	if err != nil {
		return err
	}
	removeLeftovers(log)
	// Build progress goes to clients too, once the server exists.
	var toClients atomic.Pointer[host.Server]
	log = slog.New(clientLog{log.Handler(), &toClients})
	defer func() {
		// A compile still running at exit gets compileGrace to reach the
		// cache; past that the process exits anyway (an AI host closing
		// stdin expects it gone), and the next start interprets again.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compileGrace)
		defer cancel()
		rt.close(cctx)
	}()
	if *debugAddr != "" {
		dctx, stop := context.WithCancel(ctx)
		wait, err := serveDebug(dctx, *debugAddr, log)
		if err != nil {
			stop()
			return err
		}
		defer wait()
		defer stop()
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	reg := plugins.NewRegistry()
	var met *metrics.Metrics
	var obs plugins.Observer
	if *metricsAddr != "" {
		met = metrics.New(reg)
		obs = met
		stop, err := serveMetrics(ctx, *metricsAddr, met, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	var grants *plugins.Grants
	stName := "the in-process store"
	if url := store.URL(cfg.Server.Store); url != "" {
		stName = "store " + store.Redact(url)
		// Shared by every replica on the store, read on every check.
		grants = plugins.StoreGrants(st, store.Redact(url))
	} else if cfg.File != "" {
		// A bad file is said and stands for no grants: the person is
		// asked again.
		if grants, err = plugins.OpenGrants(plugins.GrantsFile(cfg.File)); err != nil {
			log.Error("grants not read: no standing grant applies until the file reads; the person is asked again", "err", err)
		}
	}
	rt.loader = rt.newLoader(log, obs, !*eager, grants, st, stName)
	validator, err := hf.oauth(ctx, cfg.Auth, log)
	if err != nil {
		return err
	}
	if validator != nil {
		defer validator.Close()
	}
	ln, httpOpts, err := hf.listen(log, validator != nil)
	if err != nil {
		return err
	}
	httpOpts.Auth = validator
	if ln != nil {
		defer ln.Close()
	}

	var audit io.Writer
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer f.Close()
		audit = f
	}

	startupDeadline := time.Now().Add(cfg.Server.StartupWait)
	opts := hostOptions(cfg, log, audit)
	opts.Tracer = tr.tracer()
	opts.Store = st
	srv := host.New(reg, opts)
	toClients.Store(srv)
	if met != nil {
		met.Serve(srv)
	}

	// Plugins load in the background so initialize is answered at once;
	// the first list requests wait (bounded) for this load. A signal does
	// not stop it: calls in flight may be waiting for it, and are answered
	// before the transport returns.
	loadCtx, cancelLoad := context.WithCancel(context.WithoutCancel(ctx))
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		manage(loadCtx, rt, reg, srv, met, cfg.File, !*noWatch, *debounce, log)
	}()
	warned := make(chan struct{})
	go func() {
		defer close(warned)
		warnStartup(loadCtx, startupDeadline, reg, rt.loader, srv, log)
	}()

	if ln != nil {
		httpOpts.BodyTimeout = cfg.Server.BodyTimeout
		httpOpts.MaxInFlightPerSession = cfg.Server.MaxInFlightPerSession
		httpOpts.MaxInFlightPerClient = cfg.Server.MaxInFlightPerClient
		httpOpts.MaxSessions = cfg.Server.MaxSessions
		err = streamable.Serve(ctx, srv, ln, httpOpts)
	} else {
		// A write to a closed stdout then fails with EPIPE instead of
		// killing the process with SIGPIPE, which would say nothing.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		err = stdio.Serve(ctx, srv, stdin, stdout)
		if errors.Is(err, syscall.EPIPE) {
			log.Info("stdout closed by the client: the session is over", "err", err)
			err = nil
		}
	}
	cancelLoad()
	<-loaded
	<-warned
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	reg.Close(closeCtx)
	return err
}

func hostOptions(cfg *config.Config, log *slog.Logger, audit io.Writer) host.Options {
	return host.Options{
		Name:            cfg.Server.Name,
		Version:         versionString(),
		Instructions:    cfg.Server.Instructions,
		PageSize:        cfg.Server.PageSize,
		MaxMessageBytes: cfg.Server.MaxMessageBytes,
		StartupWait:     cfg.Server.StartupWait,
		ShutdownGrace:   cfg.Server.ShutdownGrace,
		CacheTTL:        cfg.Server.CacheTTL,
		CacheScope:      cfg.Server.CacheScope,
		TaskTTL:         cfg.Server.TaskTTL,
		TaskMaxBytes:    cfg.Server.TaskMaxBytes,
		TaskAfter:       cfg.Server.TaskAfter,
		RequestStateKey: requestStateKey(cfg, log),
		Logger:          log,
		Audit:           audit,
	}
}

// defaultStateKeyEnv holds the key signing 2026-07-28 requestState when
// [server] request_state_key_env names no other variable.
const defaultStateKeyEnv = "MCPHOST_REQUEST_STATE_KEY"

// requestStateKey reads the requestState key from the environment. Without
// one, each process signs with a random key, so a retry must reach the
// same replica: the log says so.
func requestStateKey(cfg *config.Config, log *slog.Logger) []byte {
	env := cmp.Or(cfg.Server.RequestStateKeyEnv, defaultStateKeyEnv)
	key := os.Getenv(env)
	if key == "" {
		log.Debug("no request state key; using a random one for this process", "env", env)
		return nil
	}
	return []byte(key)
}
