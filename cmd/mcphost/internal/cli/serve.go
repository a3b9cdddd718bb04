package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
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
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/watch"
)

// defaultCompileWait bounds how long serve waits at exit for a compile
// still running in the background (--compile-wait), so that the next
// start loads its code from the cache instead of interpreting and
// compiling again: a 4 MB Go guest takes ~1.5 s on an idle machine, 5 s
// and more under load. A signal ends the wait at once.
const defaultCompileWait = 10 * time.Second

// defaultBuildWait bounds how long serve waits at exit for the builds of
// its first load (--build-wait): a cold Go build of the example plugins
// takes one to several minutes, and a build killed at exit would make the
// next start build again. A signal ends the wait at once.
const defaultBuildWait = 3 * time.Minute

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
	compileWait := fs.Duration("compile-wait", defaultCompileWait, "at exit, how long to wait for compiles still running in the background, so that the next start loads their code from the cache (a signal stops the wait; 0: do not wait)")
	buildWait := fs.Duration("build-wait", defaultBuildWait, "at exit, how long to wait for the first load's builds still running, so that the next start finds them in the cache (a signal stops the wait; 0: do not wait)")
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
		// A compile still running at exit gets --compile-wait to reach
		// the cache (the engine says which, and for how long); past that
		// the process exits anyway (an AI host closing stdin expects it
		// gone), and the next start interprets again. After stdin closed,
		// a signal ends the wait; after a signal, a second one does.
		// A compile an earlier exit left unfinished gets longer
		// (compilewait.go), so that short runs on a loaded machine
		// still fill the cache.
		wait, unfinished := exitCompileWait(abandonedFile(), rt.engine.Compiling(), *compileWait, log)
		wctx, interrupt := context.WithCancelCause(context.WithoutCancel(ctx))
		defer interrupt(nil)
		cctx, cancel := context.WithTimeoutCause(wctx, wait, errCompileWait)
		defer cancel()
		if ctx.Err() == nil {
			stop := context.AfterFunc(ctx, func() { interrupt(errInterrupted) })
			defer stop()
		}
		rt.close(cctx)
		unfinished.record(rt.engine.Compiling(), log)
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
	st, err := openStore(ctx, "", cfg, log)
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
	// Grants in a store are shared by every replica on it, read on every check.
	grants := st.grants()
	if grants == nil && cfg.File != "" {
		// A bad file is said and stands for no grants: the person is
		// asked again.
		if grants, err = consent.OpenGrants(consent.GrantsFile(cfg.File)); err != nil {
			log.Error("grants not read: no standing grant applies until the file reads; the person is asked again", "err", err)
		}
	}
	rt.loader = rt.newLoader(log, obs, !*eager, grants, st, st.name())
	validator, err := hf.oauth(ctx, cfg.Auth, log)
	if err != nil {
		return err
	}
	if validator != nil {
		defer validator.Close()
	}
	if hf.addr != "" {
		warnStateKey(cfg, hf.addr, log)
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
	opts.Loading = rt.loader.Busy
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
		manage(loadCtx, rt, reg, st, srv, met, cfg.File, !*noWatch, *debounce, log)
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
		httpOpts.TrustedProxies = cfg.Server.TrustedProxies
		httpOpts.RatePerClient, httpOpts.RatePeriod = cfg.Server.RatePerClient.N, cfg.Server.RatePerClient.Per
		httpOpts.DrainGrace = cfg.Server.DrainGrace
		httpOpts.Store = st
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
	finishBuilds(ctx, reg, rt.loader, *buildWait, log)
	cancelLoad()
	<-loaded
	<-warned
	// Tasks still running end failed, saying their replica shut down,
	// while the store is still open.
	srv.Close()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	reg.Close(closeCtx)
	return err
}

var (
	errCompileWait = errors.New("--compile-wait passed")
	errInterrupted = errors.New("interrupted by a signal")
)

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
	env := stateKeyEnv(cfg)
	key := os.Getenv(env)
	if key == "" {
		log.Debug("no request state key; using a random one for this process", "env", env)
		return nil
	}
	return []byte(key)
}

// stateKeyEnv names the variable that holds the requestState key.
func stateKeyEnv(cfg *config.Config) string {
	return cmp.Or(cfg.Server.RequestStateKeyEnv, defaultStateKeyEnv)
}

// warnStateKey warns, when serving HTTP where a balancer is plausible
// (balancerHint), that without a request-state key a retry cannot cross
// replicas. A loopback listener with no store and no trusted proxies is
// one process on one machine: a warning there would be noise.
func warnStateKey(cfg *config.Config, addr string, log *slog.Logger) {
	why := balancerHint(cfg, addr)
	if why == "" {
		return
	}
	if env := stateKeyEnv(cfg); os.Getenv(env) == "" {
		log.Warn("no request state key: this process signs 2026-07-28 requestState with a random key of its own, "+
			"so a retry after input_required that reaches another replica fails its integrity check; "+
			"behind a balancer, set the same secret in "+env+" on every replica", "env", env, "balancer", why)
	}
}

// balancerHint says why replicas behind a balancer are plausible for a
// server listening on addr with cfg, or "" when nothing suggests them.
func balancerHint(cfg *config.Config, addr string) string {
	switch {
	case storeURL("", cfg) != "":
		return "a store is configured, which replicas share"
	case len(cfg.Server.TrustedProxies) > 0:
		return "trusted_proxies is set"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip, err := netip.ParseAddr(host); host == "localhost" || (err == nil && ip.IsLoopback()) {
		return ""
	}
	return "listening beyond loopback"
}
