package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/host/internal/protocol"
)

// This file is the seam between the MCP core and the transports, in the
// spirit of go-sdk's Transport/Connection but turned around: a transport
// frames and routes bytes and owns its goroutines; the core owns the
// protocol. A transport opens a [Conn] with [Server.Connect], giving it an
// [Outbound] for the way back, feeds it whole messages with [Conn.Handle],
// and ends it with [Conn.Close]. The core never reads, frames or writes
// bytes itself, and a message the transport cannot even frame (too large)
// is still answered through [Conn.TooLarge] rather than ending anything.

// Outbound is a connection's way back to its client; each transport
// provides one. Send delivers one complete JSON-RPC message or batch array,
// compact (no newlines) and without a trailing newline, and must not keep
// msg after it returns. related is the id of the client request the
// message belongs to (a response's own id, or the request a progress or log
// notification or a server→client request is about); nil means the message
// belongs to no request. Streamable HTTP routes on it; stdio ignores it.
// Send may be called from many goroutines at once. Its error is only
// logged: a transport whose client went away ends the Conn itself.
type Outbound interface {
	Send(msg []byte, related json.RawMessage) error
}

// Finisher is implemented by an Outbound that holds a connection open for
// each request until its response (Streamable HTTP). Unanswered tells it
// that the request related to the id ended without one (it was
// cancelled), so that the connection can be closed instead of waiting
// forever.
type Finisher interface {
	Unanswered(related json.RawMessage)
}

// ConnInfo describes a connection being opened.
type ConnInfo struct {
	// ID names the connection in logs and the audit log ("stdio-…",
	// "http-…"). It need not be unique, and it is not a credential.
	ID string
	// Stateless serves every request in the stateless era (2026-07-28):
	// a session-less HTTP POST. A stateless Conn is never initialized.
	Stateless bool
	// Principal is who is asking, for the ownership of tasks a stateless
	// request creates: the HTTP transport's hash of the caller's identity
	// (with OAuth its issuer and subject, not the token); "" for none.
	Principal string
}

// Conn is one client connection's protocol state, independent of the
// transport that opened it with [Server.Connect]. Its methods are safe
// for concurrent use.
type Conn struct{ s *session }

// Connect opens a connection whose messages go back through out. The
// transport must call [Conn.Close] when the connection ends.
func (srv *Server) Connect(out Outbound, info ConnInfo) *Conn {
	s := srv.newSession(out, info.ID)
	s.stateless = info.Stateless
	s.principal = info.Principal
	return &Conn{s: s}
}

// Handle serves one incoming message or batch array. ctx bounds every
// request it starts: cancelling it cancels them and suppresses their
// responses. A malformed message is answered (or, as a notification,
// dropped) and the Conn goes on. Cheap methods (initialize, ping, …) are
// served at once, in order; every other request is tracked, so that a
// cancellation handled after it finds it, and queued to the Conn's
// workers, which answer it. Handle never waits for a tool, so a transport
// can call it from its one reading goroutine. The Conn keeps msg, so the
// caller must not modify it afterwards.
func (c *Conn) Handle(ctx context.Context, msg []byte) { c.s.handle(ctx, msg) }

// HandleHere is [Conn.Handle] for a transport's one reading goroutine
// when no further message is waiting to be read: a concurrent request
// that no other request is in flight beside is served on the calling
// goroutine rather than a worker, so that its answer waits for no
// goroutine to be woken (one beside others goes to a worker, as with
// Handle). If the request is still running after a moment (at most
// 0.4 ms when the machine is busy, about 2 ms when every P is idle), or
// as soon as it waits for the client's answer to a request of ours,
// carry, the rest of the caller's reading loop, is started on one of the
// Conn's workers, so that reading goes on; HandleHere then reports false
// once the request is done, and the caller must return without reading
// again.
// It reports true when the caller goes on reading.
func (c *Conn) HandleHere(ctx context.Context, msg []byte, carry func()) bool {
	t, ok := c.s.handleMessage(ctx, msg, nil)
	return !ok || c.s.runHere(t, carry)
}

// HandleKeyed is [Conn.Handle] with the related key a batch's answer
// array is sent with (see [Outbound]): Streamable HTTP passes a key of its
// own per POST, to find the stream the array belongs on.
func (c *Conn) HandleKeyed(ctx context.Context, msg []byte, batchKey json.RawMessage) {
	if j, ok := c.Start(ctx, msg, batchKey); ok {
		j.Queue()
	}
}

// Start is [Conn.HandleKeyed] except for a concurrent request (tools/call,
// …) in msg: it is tracked, as Handle tracks it, and returned instead of
// queued to the Conn's workers, for the caller to run with [Job.Run]. ok
// is false when there is nothing to run (the message was answered at
// once, was no request, or was a batch, whose requests are queued).
func (c *Conn) Start(ctx context.Context, msg []byte, batchKey json.RawMessage) (j Job, ok bool) {
	t, ok := c.s.handleMessage(ctx, msg, batchKey)
	return Job{s: c.s, t: t}, ok
}

// Job is a concurrent request that [Conn.Start] tracked and did not run.
type Job struct {
	s *session
	t task
}

// Run serves the request on the calling goroutine and answers it (unless
// it was cancelled), as a worker would. It is for a transport with a
// goroutine of its own per request that waits for the answer anyway
// (Streamable HTTP: the POST's): a worker would cost a goroutine switch
// each way and, on a new Conn, a new goroutine whose stack grows again
// for the call. Run blocks for as long as the request runs, so the caller
// sees to what must go on meanwhile: writing what the request sends
// before its answer, and noticing that its client went away.
func (j Job) Run() { j.s.run(j.t) }

// Queue hands the request to one of the Conn's workers, as Handle does.
func (j Job) Queue() { j.s.workers.queue(j.t) }

// TooLarge answers a message of n bytes that the transport discarded for
// exceeding limit, with its id when the transport could read it from the
// message's first bytes (see jsonrpc.PeekID), and with a null id otherwise.
func (c *Conn) TooLarge(n, limit int64, id []byte) { c.s.tooLarge(n, limit, id) }

// ClientGone fails every pending server→client request and refuses new
// ones: the client can no longer answer (stdin reached EOF). Requests in
// flight go on and may still send their responses.
func (c *Conn) ClientGone() { c.s.clientGone() }

// Drain waits up to grace for the requests in flight to finish and
// reports whether they did.
func (c *Conn) Drain(grace time.Duration) bool { return c.s.drain(grace) }

// Close ends the connection once its requests have been cancelled (by the
// ctx given to Handle): it waits for them and stops all server-initiated
// traffic to it. Close is idempotent.
func (c *Conn) Close() { c.s.close() }

// Wait blocks until the requests in flight have finished (and their
// responses have been sent). Cancelling the ctx given to Handle ends them.
func (c *Conn) Wait() { c.s.wg.Wait() }

// Stateless reports whether the Conn was opened with ConnInfo.Stateless.
func (c *Conn) Stateless() bool { return c.s.stateless }

// Version returns the protocol revision initialize negotiated, or 0
// before initialize (and always on a stateless Conn).
func (c *Conn) Version() protocol.Version { return c.s.version() }

// Logger returns the connection's logger, which names it.
func (c *Conn) Logger() *slog.Logger { return c.s.log }

// MaxMessageBytes is the bound on one incoming message that transports
// enforce ([Options.MaxMessageBytes]).
func (srv *Server) MaxMessageBytes() int64 { return srv.opts.MaxMessageBytes }

// Logger returns the server's logger ([Options.Logger]).
func (srv *Server) Logger() *slog.Logger { return srv.log }

// StartupLeft returns what is left of the startup wait ([Options.StartupWait])
// while the registry's initial load is still running, and 0 once it is
// done: a transport that drains its requests on shutdown adds it to its
// grace, because a request may be waiting for the load (a cold start
// building plugins from source takes a while).
func (srv *Server) StartupLeft() time.Duration {
	select {
	case <-srv.reg.Ready():
		return 0
	default:
		return max(0, time.Until(srv.readyBy))
	}
}

// ShutdownGrace is how long a transport shutting down waits for the
// requests in flight ([Options.ShutdownGrace]).
func (srv *Server) ShutdownGrace() time.Duration { return srv.opts.ShutdownGrace }

// Ready is closed once the registry's initial load is done (readiness
// probes).
func (srv *Server) Ready() <-chan struct{} { return srv.reg.Ready() }

// ToolInputSchema returns the inputSchema of the tool named name in the
// current generation, or nil when there is none (the Streamable HTTP
// transport checks the Mcp-Param-* headers it declares).
func (srv *Server) ToolInputSchema(name string) json.RawMessage {
	g, release := srv.reg.Acquire()
	defer release()
	if g == nil {
		return nil
	}
	t := g.Tool(name)
	if t == nil {
		return nil
	}
	return t.Def.InputSchema
}
