package host

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/host/internal/reqstate"
	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/store"
)

// Options configure a [Server]. Zero values mean the documented defaults.
type Options struct {
	// Name and Version are the serverInfo sent to clients (default
	// "mcphost" and "dev").
	Name, Version string
	// Instructions is sent in the initialize result when not empty.
	Instructions string
	// PageSize is the number of items per page of tools/list,
	// resources/list, resources/templates/list and prompts/list
	// (default 100).
	PageSize int
	// MaxMessageBytes bounds one incoming message (default 4 MiB). A
	// longer line is discarded and answered with -32600; the session goes
	// on.
	MaxMessageBytes int64
	// StartupWait bounds how long requests that need plugins wait for the
	// registry's initial load, counted from New (default 10s; negative
	// means do not wait). Clients that ignore list_changed then still see
	// the initial plugins. It only bounds the wait for plugins still
	// loading: a list answered when it runs out holds every plugin loaded
	// by then (plugins.Registry.Publish), and a call to a tool, prompt or
	// resource of a loaded plugin does not wait at all.
	StartupWait time.Duration
	// Loading, when not nil, names the plugins still loading (with their
	// step: "hash (build)"). A list answered before the initial load is
	// done names them to the client, on the answer and in a warning just
	// before it (startup_progress.go).
	Loading func() []string
	// Logger receives the server's own logs (default slog.Default()).
	Logger *slog.Logger
	// CacheTTL and CacheScope are the caching hints (ttlMs, cacheScope) of
	// 2026-07-28 results that may be cached: the lists, resources/read and
	// server/discover. The defaults are 0 (immediately stale: clients rely
	// on list_changed through subscriptions/listen) and "private".
	CacheTTL   time.Duration
	CacheScope string
	// RequestStateKey signs the requestState of 2026-07-28 input_required
	// results (HMAC-SHA256), so that any replica sharing the key accepts a
	// retry. Empty means a random key per process: retries must then come
	// back to the same process.
	RequestStateKey []byte
	// Audit, when not nil, receives every message in and out as one JSON
	// line: {"time","dir":"in"|"out","session","msg"}.
	Audit io.Writer

	// TaskTTL is how long a task (taskcall.go) and its result are kept after
	// it is created; a task still running then is cancelled. Zero means
	// 30 minutes.
	TaskTTL time.Duration
	// TaskMaxBytes bounds the memory of kept task results: the oldest
	// finished tasks are evicted (and logged) beyond it. Zero means 64 MiB.
	TaskMaxBytes int64
	// TaskAfter is how long a task-capable call that reports no progress
	// runs in its request before it becomes a task. Zero means 1s.
	TaskAfter time.Duration

	// Tracer, when not nil, starts a server span for every request
	// (trace.go); nil, the default, traces nothing and costs nothing.
	Tracer trace.Tracer

	// Store holds what replicas share (package store): tasks, and the
	// messages that reach the replica running a call. Nil means a fresh
	// in-process store, which is single-replica behaviour. The caller
	// owns it and closes it after Close.
	Store store.Store

	// ShutdownGrace bounds how long a transport that is shutting down (its
	// ctx is done, or stdin reached EOF) waits for the requests in flight
	// to answer before it cancels them; each call is also bounded by its
	// plugin's own timeout. Zero means 10s.
	ShutdownGrace time.Duration
}

const (
	// defaultStartupWait is host's own; a config file's server gets
	// config.DefaultStartupWait (50s) through cmd. Options' other
	// defaults are config's [server] defaults.
	defaultStartupWait = 10 * time.Second
	// coalesceDelay is how long registry changes are gathered before one
	// notification per kind goes out: a reload touches several plugins in
	// quick succession, and clients re-list on every notification.
	coalesceDelay = 5 * time.Millisecond
)

// Server is an MCP server over a plugin registry. One Server serves any
// number of sessions (each transport connection is one); it is safe for concurrent use.
type Server struct {
	reg        *plugins.Registry
	opts       Options
	log        *slog.Logger
	audit      *auditLog
	initResult map[protocol.Version]json.RawMessage
	methods    map[string]*method // the dispatch table
	serverInfo []byte             // {"name","version"}, for stateless results
	state      *reqstate.Sealer   // signs requestState (see inputrequired.go)
	tasks      *tasks.Store       // the tasks extension (taskcall.go, host/internal/tasks)
	replica    string             // this process in Options.Store: its tasks' records, its list changes (listshare.go)

	discoverResult json.RawMessage
	readyBy        time.Time // StartupWait deadline
	coalesce       time.Duration

	mu        sync.Mutex
	sessions  map[*session]struct{}
	listeners map[*listener]struct{} // open subscriptions/listen requests

	// early is what any session was answered before the initial load
	// was done, for the stateless era's listeners; changeCount counts
	// the registry's changes, to tell which came after (changes.go).
	early       earlyMarks
	changeCount atomic.Uint64

	chMu    sync.Mutex
	changed chan struct{}   // closed (and replaced) by every change
	changes plugins.Changes // gathered since the timer started
	timer   *time.Timer     // nil when no flush is scheduled
	closed  bool            // set by Close: no flush starts after it
	// flushing counts running flushes, so that Close returns only after
	// the last one has finished.
	flushing sync.WaitGroup
	stop     func() // ends the registry subscription
	// stopLists ends followLists (listshare.go); listsDone closes when it
	// has, listsReady once it first listens (for tests).
	stopLists  func()
	listsDone  chan struct{}
	listsReady chan struct{}
}

// New returns a Server for reg. It subscribes to reg's changes at once;
// [Server.Close] ends the subscription.
func New(reg *plugins.Registry, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = config.DefaultName
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.PageSize <= 0 {
		opts.PageSize = config.DefaultPageSize
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = config.DefaultMaxMessageBytes
	}
	if opts.StartupWait == 0 {
		opts.StartupWait = defaultStartupWait
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = config.DefaultShutdownGrace
	}
	if opts.CacheScope == "" {
		opts.CacheScope = "private"
	}
	if opts.CacheTTL < 0 {
		opts.CacheTTL = 0
	}
	if opts.Store == nil {
		opts.Store = store.NewMemory()
	}
	srv := &Server{
		reg:        reg,
		opts:       opts,
		log:        opts.Logger,
		audit:      newAuditLog(opts.Audit),
		initResult: initResults(&opts),
		methods:    methodTable(opts.Tracer),
		readyBy:    time.Now().Add(opts.StartupWait),
		coalesce:   coalesceDelay,
		sessions:   make(map[*session]struct{}),
		changed:    make(chan struct{}),
	}
	srv.serverInfo = srv.serverInfoJSON()
	srv.discoverResult = discoverResult(&opts)
	srv.state = reqstate.New(opts.RequestStateKey)
	srv.listeners = make(map[*listener]struct{})
	srv.tasks = tasks.New(tasks.Config{TTL: opts.TaskTTL, MaxBytes: opts.TaskMaxBytes, After: opts.TaskAfter, Store: opts.Store, Log: srv.log})
	srv.replica = srv.tasks.Replica()
	srv.stop = reg.Subscribe(srv.onChange)
	lctx, cancel := context.WithCancel(context.Background())
	srv.stopLists, srv.listsDone, srv.listsReady = cancel, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(srv.listsDone)
		srv.followLists(lctx)
	}()
	return srv
}

// Close ends the registry subscription and waits for a list_changed
// flush in progress to finish; none starts after it. Sessions being
// served go on.
func (srv *Server) Close() {
	srv.stop()
	srv.stopLists()
	<-srv.listsDone
	srv.tasks.Close()
	srv.chMu.Lock()
	srv.closed = true
	if srv.timer != nil {
		srv.timer.Stop()
		srv.timer = nil
	}
	srv.chMu.Unlock()
	srv.flushing.Wait()
}

func (srv *Server) addSession(s *session) {
	srv.mu.Lock()
	srv.sessions[s] = struct{}{}
	srv.mu.Unlock()
}

func (srv *Server) removeSession(s *session) {
	srv.mu.Lock()
	delete(srv.sessions, s)
	srv.mu.Unlock()
}

func (srv *Server) eachSession(fn func(*session)) {
	srv.mu.Lock()
	ss := make([]*session, 0, len(srv.sessions))
	for s := range srv.sessions {
		ss = append(ss, s)
	}
	srv.mu.Unlock()
	for _, s := range ss {
		fn(s)
	}
}

// acquire returns the current generation once the initial load is done
// (waiting at most until the StartupWait deadline), its release func, and
// whether the initial load was done.
// The generation may be nil if nothing was ever loaded.
func (srv *Server) acquire(ctx context.Context) (g *plugins.Generation, release func(), ready bool) {
	select {
	case <-srv.reg.Ready():
	default:
		if d := time.Until(srv.readyBy); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-srv.reg.Ready():
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	// Checked before Acquire: if the load finishes in between, the
	// generation is the new one and ready is a harmless false.
	select {
	case <-srv.reg.Ready():
		ready = true
	default:
	}
	g, release = srv.reg.Acquire()
	return g, release, ready
}

// acquireFound is acquire for a request that needs one item (a tool, a
// prompt, a resource): while the initial load runs, it returns as soon as
// found finds the item among the plugins loaded so far, and otherwise
// waits like acquire. ready is false when it returned before the initial
// load was done.
func (srv *Server) acquireFound(ctx context.Context, found func(*plugins.Generation) bool) (g *plugins.Generation, release func(), ready bool) {
	var t *time.Timer
	for {
		srv.chMu.Lock()
		changed := srv.changed
		srv.chMu.Unlock()
		select {
		case <-srv.reg.Ready():
			ready = true
		default:
		}
		g, release = srv.reg.Acquire()
		if ready || found(g) {
			break
		}
		release()
		d := time.Until(srv.readyBy)
		if d <= 0 || ctx.Err() != nil {
			return srv.acquire(ctx)
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-changed:
		case <-srv.reg.Ready():
		case <-t.C:
			return srv.acquire(ctx)
		case <-ctx.Done():
			return srv.acquire(ctx)
		}
	}
	return g, release, ready
}

// Notify reports one of the host's own events (a plugin that failed to
// load, a reload, …) to the log and, as notifications/message, to every
// session whose logging/setLevel level admits level. Sessions that never
// set a level receive nothing. level is an MCP level ("debug" … "emergency").
func (srv *Server) Notify(level, logger string, data any) {
	srv.log.Log(context.Background(), slogLevel(level), "mcp log message", "level", level, "logger", logger, "data", data)
	srv.NotifyClients(level, logger, data)
}

// NotifyClients is [Server.Notify] without the log record, for events the
// caller has logged already (a reload's errors, which the plugin loader
// logs with their full cause).
func (srv *Server) NotifyClients(level, logger string, data any) {
	params, err := json.Marshal(struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{level, logger, data})
	if err != nil {
		srv.log.Error("encode log notification", "err", err)
		return
	}
	srv.eachSession(func(s *session) {
		if s.admits(level) {
			s.notify("notifications/message", params, nil)
		}
	})
}

func slogLevel(level string) slog.Level {
	switch l, _ := parseLevel(level); {
	case l == 0:
		return slog.LevelDebug
	case l <= 2:
		return slog.LevelInfo
	case l == 3:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
