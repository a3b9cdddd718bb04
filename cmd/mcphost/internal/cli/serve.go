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

// serveFlags are serve's flags.
type serveFlags struct {
	common
	http        httpFlags
	noWatch     bool
	debounce    time.Duration
	auditPath   string
	metricsAddr string
	eager       bool
	debugAddr   string
	compileWait time.Duration
	buildWait   time.Duration
}

// parseServeFlags parses serve's command line.
func parseServeFlags(args []string, stdout, stderr io.Writer) (*serveFlags, error) {
	fs := newFlags("serve", stdout, stderr)
	var f serveFlags
	f.common.register(fs)
	fs.BoolVar(&f.noWatch, "no-watch", false, "do not watch plugins.toml and plugin files for changes")
	fs.DurationVar(&f.debounce, "watch-debounce", watch.DefaultDebounce, "how long changed files must stay quiet before a reload")
	fs.StringVar(&f.auditPath, "audit-log", "", "append every message in and out to this file as JSON lines")
	fs.StringVar(&f.metricsAddr, "metrics", "", "serve Prometheus metrics at http://`host:port`/metrics, apart from MCP (off by default; a bare port binds 127.0.0.1, port 0 picks a free one)")
	fs.BoolVar(&f.eager, "eager", false, "compile every plugin at start; by default a plugin whose lists are in the list cache (same code, limits and config as when it last loaded) is listed from it and compiled on first use")
	fs.StringVar(&f.debugAddr, "debug-addr", "", "serve net/http/pprof on this loopback `host:port` (for soak runs and diagnosis)")
	fs.DurationVar(&f.compileWait, "compile-wait", defaultCompileWait, "at exit, how long to wait for compiles still running in the background, so that the next start loads their code from the cache (a signal stops the wait; 0: do not wait)")
	fs.DurationVar(&f.buildWait, "build-wait", defaultBuildWait, "at exit, how long to wait for the first load's builds still running, so that the next start finds them in the cache (a signal stops the wait; 0: do not wait)")
	f.http.register(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return &f, nil
}

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseServeFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	tlog, err := f.logger(stderr)
	if err != nil {
		return err
	}
	tr, err := startTracing(ctx, os.Getenv, tlog)
	if err != nil {
		return err
	}
	defer tr.shutdown(tlog) // last: what closing the plugins traced goes out too
	f.tracer = tr.sandbox()
	// A saved plugin (or one whose compiled code left the cache) serves
	// from its first call; the compiled code takes over when it is ready.
	f.interpret = true
	log, cfg, rt, err := f.setup(ctx, stderr)
	if err != nil {
		return err
	}
	removeLeftovers(log)
	// Build progress goes to clients too, once the server exists.
	var toClients atomic.Pointer[host.Server]
	log = slog.New(clientLog{log.Handler(), &toClients})
	defer closeRuntime(ctx, rt, f.compileWait, log)
	if f.debugAddr != "" {
		stop, err := startDebug(ctx, f.debugAddr, log)
		if err != nil {
			return err
		}
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
	if f.metricsAddr != "" {
		met = metrics.New(reg)
		obs = met
		stop, err := serveMetrics(ctx, f.metricsAddr, met, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	rt.loader = rt.newLoader(log, obs, !f.eager, serveGrants(cfg, st, log), st, st.name())
	ln, httpOpts, closeHTTP, err := listenHTTP(ctx, &f.http, cfg, st.url, log)
	if err != nil {
		return err
	}
	defer closeHTTP()
	audit, closeAudit, err := openAudit(f.auditPath)
	if err != nil {
		return err
	}
	defer closeAudit()

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
	stopLoading := startLoading(ctx, f, startupDeadline, rt, reg, st, srv, met, cfg.File, log)

	if ln != nil {
		err = serveHTTP(ctx, srv, ln, httpOpts, cfg, st)
	} else {
		err = serveStdio(ctx, srv, stdin, stdout, log)
	}
	finishBuilds(ctx, reg, rt.loader, f.buildWait, log)
	stopLoading()
	shutdown(ctx, srv, reg)
	return err
}

// closeRuntime closes the engine at exit. A compile still running gets
// compileWait to reach the cache (the engine says which, and for how
// long); past that the process exits anyway (an AI host closing stdin
// expects it gone), and the next start interprets again. After stdin
// closed, a signal ends the wait; after a signal, a second one does. A
// compile an earlier exit left unfinished gets longer (compilewait.go),
// so that short runs on a loaded machine still fill the cache.
func closeRuntime(ctx context.Context, rt *pluginRuntime, compileWait time.Duration, log *slog.Logger) {
	wait, unfinished := exitCompileWait(abandonedFile(), rt.engine.Compiling(), compileWait, log)
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
}

// startDebug serves --debug-addr until stop, which waits for the server
// to end.
func startDebug(ctx context.Context, addr string, log *slog.Logger) (stop func(), err error) {
	dctx, cancel := context.WithCancel(ctx)
	wait, err := serveDebug(dctx, addr, log)
	if err != nil {
		cancel()
		return nil, err
	}
	return func() {
		cancel()
		wait()
	}, nil
}

// serveGrants returns the grants serve checks: a store's, shared by every
// replica on it and read on every check, else plugins.grants.toml beside
// the config file. A bad file is said and stands for no grants (the
// person is asked again).
func serveGrants(cfg *config.Config, st *sharedStore, log *slog.Logger) *consent.Grants {
	grants := st.grants()
	if grants == nil && cfg.File != "" {
		var err error
		if grants, err = consent.OpenGrants(consent.GrantsFile(cfg.File)); err != nil {
			log.Error("grants not read: no standing grant applies until the file reads; the person is asked again", "err", err)
		}
	}
	return grants
}

// listenHTTP opens what --http asks for: the OAuth validator and the
// listener (nil for stdio), with the HTTP options that do not depend on
// the config's [server] limits. closeHTTP releases both.
func listenHTTP(ctx context.Context, hf *httpFlags, cfg *config.Config, storeURL string, log *slog.Logger) (ln net.Listener, opts streamable.Options, closeHTTP func(), err error) {
	validator, err := hf.oauth(ctx, cfg.Auth, log)
	if err != nil {
		return nil, opts, nil, err
	}
	closeValidator := func() {
		if validator != nil {
			validator.Close()
		}
	}
	if hf.addr != "" {
		warnStateKey(cfg, storeURL, hf.addr, log)
	}
	ln, opts, err = hf.listen(log, validator != nil)
	if err != nil {
		closeValidator()
		return nil, opts, nil, err
	}
	opts.Auth = validator
	return ln, opts, func() {
		if ln != nil {
			ln.Close()
		}
		closeValidator()
	}, nil
}

// openAudit opens --audit-log for appending, or returns a nil writer
// when it is not set.
func openAudit(path string) (audit io.Writer, closeAudit func(), err error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--audit-log: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// startLoading loads the plugins in the background, so initialize is
// answered at once, and then watches them (unless --no-watch); the first
// list requests wait (bounded) for this load. A signal does not stop it:
// calls in flight may be waiting for it, and are answered before the
// transport returns. stop ends the loading and the startup warnings and
// waits for both.
func startLoading(ctx context.Context, f *serveFlags, startupDeadline time.Time, rt *pluginRuntime, reg *plugins.Registry, st *sharedStore, srv *host.Server, met *metrics.Metrics, file string, log *slog.Logger) (stop func()) {
	loadCtx, cancelLoad := context.WithCancel(context.WithoutCancel(ctx))
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		manage(loadCtx, rt, reg, st, srv, met, file, !f.noWatch, f.debounce, log)
	}()
	warned := make(chan struct{})
	go func() {
		defer close(warned)
		warnStartup(loadCtx, startupDeadline, reg, rt.loader, srv, log)
	}()
	return func() {
		cancelLoad()
		<-loaded
		<-warned
	}
}

// serveHTTP serves MCP over Streamable HTTP on ln with the [server]
// limits of cfg, until ctx ends.
func serveHTTP(ctx context.Context, srv *host.Server, ln net.Listener, opts streamable.Options, cfg *config.Config, st *sharedStore) error {
	opts.BodyTimeout = cfg.Server.BodyTimeout
	opts.MaxInFlightPerSession = cfg.Server.MaxInFlightPerSession
	opts.MaxInFlightPerClient = cfg.Server.MaxInFlightPerClient
	opts.MaxSessions = cfg.Server.MaxSessions
	opts.TrustedProxies = cfg.Server.TrustedProxies
	opts.RatePerClient, opts.RatePeriod = cfg.Server.RatePerClient.N, cfg.Server.RatePerClient.Per
	opts.DrainGrace = cfg.Server.DrainGrace
	opts.Store = st
	return streamable.Serve(ctx, srv, ln, opts)
}

// serveStdio serves MCP over stdin and stdout until either ends or ctx
// does. A stdout the client closed ends the session without an error.
func serveStdio(ctx context.Context, srv *host.Server, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	// A write to a closed stdout then fails with EPIPE instead of
	// killing the process with SIGPIPE, which would say nothing.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	err := stdio.Serve(ctx, srv, stdin, stdout)
	if errors.Is(err, syscall.EPIPE) {
		log.Info("stdout closed by the client: the session is over", "err", err)
		return nil
	}
	return err
}

// shutdown closes the server, then the plugins. Tasks still running end
// failed, saying their replica shut down, while the store is still open.
func shutdown(ctx context.Context, srv *host.Server, reg *plugins.Registry) {
	srv.Close()
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	reg.Close(closeCtx)
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
// one process on one machine: a warning there would be noise. storeURL is
// the store serve opened (storeURL, resolved once).
func warnStateKey(cfg *config.Config, storeURL, addr string, log *slog.Logger) {
	why := balancerHint(cfg, storeURL, addr)
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
// server listening on addr with cfg and the store at storeURL ("" for
// the in-process one), or "" when nothing suggests them.
func balancerHint(cfg *config.Config, storeURL, addr string) string {
	switch {
	case storeURL != "":
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
