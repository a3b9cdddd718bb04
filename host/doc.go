// Package host is mcphost's MCP server: its own JSON-RPC 2.0 layer and the
// Model Context Protocol on top of it, serving the tools, resources and
// prompts of a plugins.Registry.
//
// It owns, in three layers that HTTP will share:
//
//   - the codec (codec.go, jsonx.go): bytes to messages and back, with no
//     I/O and no reflection on the hot path; ids are kept exactly as sent;
//   - the session (session.go and the method files): lifecycle and version
//     negotiation (2024-11-05 … 2025-11-25), one dispatch table of
//     func(ctx, *session, *request) (any, error), capabilities, pagination,
//     subscriptions, logging levels, progress, cancellation, batches
//     (2025-03-26 only), the gateway's server_id routing, version filtering
//     of every result, and server→client requests through a sandbox.Peer
//     bound to each request (peer.go);
//   - the transports: stdio (stdio.go) reads newline-delimited JSON with a
//     size limit and writes each message in one locked write; Streamable
//     HTTP (http*.go) maps sessions to Mcp-Session-Id, answers each POST
//     with JSON or, once a call emits something before its result, with
//     SSE, keeps a bounded per-session replay buffer for Last-Event-ID,
//     serves the standalone GET stream, checks Host, Origin and the bearer
//     token, expires idle sessions and shuts down gracefully; it also
//     serves the 2024-11-05 HTTP+SSE transport (httplegacy.go). Both
//     transports only frame and route: everything above is shared.
//
// A session never ends because of one bad message: parse errors, invalid
// requests, oversize lines and handler panics are answered and serving
// goes on. Tool failures of every kind are isError results, not protocol
// errors. Registry changes become coalesced list_changed notifications.
//
// It does not own: loading plugins or watching files (package plugins),
// running Wasm (package sandbox; host never imports wazero or Extism),
// flags, signals and creating the listener (cmd/mcphost).
package host
