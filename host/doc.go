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
//     size limit and writes each message in one locked write.
//
// A session never ends because of one bad message: parse errors, invalid
// requests, oversize lines and handler panics are answered and serving
// goes on. Tool failures of every kind are isError results, not protocol
// errors. Registry changes become coalesced list_changed notifications.
//
// It does not own: loading plugins or watching files (package plugins),
// running Wasm (package sandbox; host never imports wazero or Extism),
// flags and signals (cmd/mcphost).
package host
