// Package jsonrpc is mcphost's JSON-RPC 2.0 wire codec: bytes to messages
// and messages to bytes, the error object and the codes JSON-RPC reserves.
// It is built on abi/jsonscan, mcphost's one validating JSON scanner.
//
// It decodes without reflection in one pass (Decode, SplitBatch), keeps
// every id exactly as sent, encodes by appending to a caller's buffer
// (AppendResponse, AppendError, AppendNotification, AppendRequest), and
// reads and rewrites JSON values in place (Member, EachMember,
// RewriteObject, Unquote, …) so that plugins' results pass
// through without being parsed into trees. PeekID finds the id at the start
// of a message too large to decode, so that it can still be answered.
//
// It does not own: I/O and framing (the transports), method names,
// sessions or anything else of MCP (package host), or error codes an
// application defines (MCP's -32002, mcphost's -32001), or the scanning
// of JSON itself (validity, strings, quoting: package jsonscan, whose
// fuzzers hold it to encoding/json).
package jsonrpc
