// Package host is mcphost's MCP server: its own JSON-RPC 2.0 layer and the
// Model Context Protocol on top of it, serving the tools, resources and
// prompts of a plugins.Registry to clients of two eras at once:
//
//   - the handshake era (2024-11-05 … 2025-11-25): initialize negotiates a
//     version for the connection (stdio) or the Mcp-Session-Id (HTTP);
//   - the stateless era (2026-07-28): no handshake, every request carries
//     its version, capabilities and log level in _meta, and any replica can
//     answer it.
//
// A client picks its era by how it opens: initialize selects the handshake
// era, a request with the 2026-07-28 _meta (or, on HTTP, a session-less
// POST with that MCP-Protocol-Version) the stateless one.
//
// The packages under host/:
//
//   - host/internal/jsonrpc: the JSON-RPC 2.0 wire codec (bytes to messages and
//     back, no I/O, no MCP; ids kept exactly as sent), its error object
//     and reserved codes, the JSON scanner, PeekID, and LineReader, the
//     framing of newline-delimited JSON;
//   - host/internal/protocol: protocol revisions, negotiation, the per-revision
//     filters of every result, and how a stateless-era request is told
//     apart (its _meta keys and error codes);
//   - host (this package): the MCP core and the seam the transports use;
//   - host/stdio: the stdio transport (stdio.Serve: one connection over
//     newline-delimited JSON, both eras on it);
//   - host/streamable: the HTTP transports (streamable.NewHandler,
//     streamable.Serve): Streamable HTTP (sessions, SSE, resumability,
//     Host/Origin checks, bearer auth, idle expiry, graceful shutdown,
//     limits; session-less 2026-07-28 POSTs on a throw-away Conn after
//     checking the headers that mirror the body), the 2024-11-05 HTTP+SSE
//     transport, and the /healthz and /readyz probes;
//   - host/auth: OAuth 2.1 access tokens for the HTTP transport: issuer
//     discovery, cached keys, JWT validation, introspection, and the
//     scope → names policy (the transport hands the core a [Caller]);
//   - host/inproc: inproc.Call, one request on an in-process connection
//     (for `mcphost call`);
//   - host/metrics: the Prometheus view of Stats;
//   - host/internal/reqstate: the HMAC-signed requestState of
//     input_required rounds (sealing, opening, expiry);
//   - host/internal/tasks: the tasks extension's runner and its records
//     in the store every replica shares; it sees a call only through the
//     interface taskcall.go implements, and never imports this package;
//   - host/internal/hosttest: the fake plugin set the tests of all of
//     these share.
//
// The core knows no transport. A transport reaches it through one seam,
// conn.go: it opens a [Conn] with [Server.Connect], giving it an
// [Outbound] (and optionally a [Finisher]) for the way back, feeds it whole
// messages with [Conn.Handle] (or [Conn.Start], which returns a
// concurrent request as a [Job] for a goroutine of the transport's to
// run), answers what it could not frame with
// [Conn.TooLarge], and ends it with [Conn.ClientGone], [Conn.Drain] and
// [Conn.Close]. Nothing else of a session is visible to a transport;
// besides the seam, a transport may ask the Server for its limits
// ([Server.MaxMessageBytes], [Server.StartupLeft]), readiness
// ([Server.Ready]) and, for Streamable HTTP's Mcp-Param-* headers, a tool's
// inputSchema ([Server.ToolInputSchema]). The core imports no transport
// package, net/http or line framing.
//
// Layout of the core, by file:
//
//   - conn.go: the transport seam;
//   - methods.go: the dispatch table (a field of the Server: one method
//     per entry, with its handler and the eras that define it), the one
//     file that names every handler;
//   - session.go, router.go, inflight.go, batch.go, outbound.go: the
//     protocol state of one connection, what a method is and the
//     lifecycle's own (initialize, ping, logging/setLevel), concurrency,
//     cancellation, batches (2025-03-26 only) and the way back to the
//     client;
//   - pool.go: the workers that run a connection's requests, and the
//     watchdog that lets a transport's reader run a lone request itself
//     without ever being stuck in it; it knows nothing of sessions;
//   - listing.go (pagination and the gateway's server_id scope), tools.go,
//     resources.go, prompts.go: the handlers, shared by both eras; each asks
//     its plugin one question (plugins.Tool.Run, Plugin.Read,
//     Prompt.Render, …) with the request's Peer;
//   - peer.go: the plugins.Peer of a request: host functions reach the
//     client as real server→client requests (handshake era) or as
//     input_required rounds (stateless era, inputrequired.go); the same path
//     carries plugins' consent questions (a host outside allowed_hosts
//     that may_request_hosts names), whose input keys are the host's own
//     and whose answers count only when a round asked them;
//   - stateless.go, inputrequired.go, listen.go: the stateless era — _meta,
//     server/discover, resultType and serverInfo on results, caching
//     hints, -32022; input_required with an HMAC-signed requestState;
//     subscriptions/listen; taskcall.go: the seam of the tasks extension
//     (tasks/get, tasks/update, tasks/cancel, tool calls answered with
//     resultType "task"), which host/internal/tasks runs, its records in
//     Options.Store, so every replica answers for every task;
//   - apps.go: the MCP Apps extension (io.modelcontextprotocol/ui) it
//     declares; the apps themselves are resources and tool _meta that
//     package plugins serves;
//   - changes.go: registry changes become coalesced list_changed
//     notifications, to handshake sessions and to listeners alike;
//     listshare.go carries them to the other replicas' listeners;
//   - errors.go: the errors host functions see (ErrNotSupported,
//     ErrClosed, ClientError) and MCP's own wire codes;
//   - trace.go: with Options.Tracer, a server span per request (parented
//     on params._meta's or the HTTP headers' trace context) and a client
//     span per request to the client; the OpenTelemetry API only, the SDK
//     is cmd/mcphost's;
//   - stats.go: a snapshot of sessions, listeners and requests in flight,
//     which cmd/mcphost turns into metrics (host knows no metrics library).
//
// A session never ends because of one bad message: parse errors, invalid
// requests, oversize lines (with their id when their first 4 KiB show it)
// and handler panics are answered and serving goes on. Tool failures of
// every kind are isError results, not protocol errors.
//
// It does not own: framing, HTTP, or any transport (the packages above),
// loading plugins or watching files (package plugins), running Wasm
// (package sandbox, which host does not import), flags, signals and
// creating the listener (cmd/mcphost).
package host
