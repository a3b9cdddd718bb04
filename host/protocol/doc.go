// Package protocol holds the MCP protocol revisions mcphost serves: their
// names and order (Version), how initialize negotiates one (Negotiate,
// Parse), and the per-revision filters that make every result carry only
// the members its client's revision defines (FilterTool, FilterCallResult,
// …). Both the MCP core (package host) and the transports use it: the
// Streamable HTTP transport checks MCP-Protocol-Version with Parse.
//
// The filters work on raw JSON without building trees (package jsonrpc's
// scanner) and return their input unchanged, without copying, when none of
// the keys they could drop appear in it.
//
// It does not own: which era a request belongs to, _meta, capabilities or
// sessions (package host), or any I/O.
package protocol
