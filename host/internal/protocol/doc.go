// Package protocol holds the MCP protocol revisions mcphost serves: their
// names and order (Version), how initialize negotiates one (Negotiate,
// Parse), and the per-revision filters that make every result carry only
// the members its client's revision defines (FilterTool, FilterCallResult,
// …), and how a request of the stateless era (2026-07-28) is recognised:
// HasStatelessMeta, IsHandshakeInitialize, the _meta keys and the error
// codes that revision adds. Both the MCP core (package host) and the
// transports use it: Streamable HTTP checks MCP-Protocol-Version with
// Parse and routes session-less POSTs with HasStatelessMeta.
//
// The filters work on raw JSON without building trees (package jsonrpc's
// scanner) and return their input unchanged, without copying, when none of
// the keys they could drop appear in it.
//
// It does not own: serving either era, the rest of _meta, capabilities or
// sessions (package host), or any I/O.
package protocol
