// Package streamable is mcphost's HTTP transport: Streamable HTTP
// (2025-03-26 and later, and the session-less POSTs of 2026-07-28), the
// deprecated HTTP+SSE transport of 2024-11-05 for older clients, and the
// /healthz and /readyz probes. NewHandler returns the http.Handler; Serve
// runs it on a listener until its context is done, then shuts down
// gracefully.
//
// Only framing and routing live here, over the core's seam
// (host.Server.Connect and host.Conn), so both feed the same sessions as
// stdio. Layout, by file:
//
//   - http.go: Options, Handler, Serve, shutdown;
//   - httppost.go, httpsse.go, httpsession.go: POST (its request run on
//     the POST's own goroutine: httpSession.runHere), SSE streams, a
//     session's streams, event ids and replay (Last-Event-ID), and the
//     cancellation of a POST's requests when its client goes away and
//     cannot resume the stream (httpSession.detach);
//   - httpstateless.go: session-less 2026-07-28 POSTs on a throw-away
//     Conn, after checking the headers that mirror the body
//     (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*);
//   - httplegacy.go: the 2024-11-05 HTTP+SSE transport (GET /sse,
//     POST /messages);
//   - httpcheck.go: Host and Origin checks (DNS rebinding) and the static
//     bearer token;
//   - auth.go: OAuth 2.1 bearer tokens (Options.Auth, validated by package
//     host/auth): RFC 9728 metadata, 401 and 403 challenges, and the
//     host.Caller each message is handed to the core with;
//   - httplimits.go: body timeout and caps on POSTs in flight per client
//     address and per session, and on sessions overall: each refusal is an
//     HTTP status with a JSON-RPC error and a `request refused` log line
//     naming the limit;
//   - httphealth.go: the probes; principal.go: whom a request speaks for,
//     who alone may use the sessions and tasks it creates.
//
// It does not own: the protocol (package host), protocol revisions
// (package protocol), creating the listener or TLS (cmd/mcphost).
package streamable
