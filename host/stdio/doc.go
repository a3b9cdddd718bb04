// Package stdio is mcphost's stdio transport: one MCP connection over
// newline-delimited JSON, in and out of a pair of streams (a process's
// stdin and stdout), serving both protocol eras on the same connection.
//
// It owns the framing (jsonrpc.LineReader: lines of at most
// host.Server.MaxMessageBytes, oversize lines answered through
// host.Conn.TooLarge rather than ending anything), the one goroutine that
// reads (host.Conn.Handle for a line while more are waiting,
// host.Conn.HandleHere for the last one, which may carry the reading loop
// on to another goroutine), the writer that never
// interleaves messages, writes nothing but them, and puts the answers that
// finish while it is writing into its next write, and the end of a
// session: EOF and a done ctx (a signal) both stop reading and let the
// requests in flight finish (draining for at most the server's shutdown
// grace plus what is left of the startup wait); a failed write cancels
// them at once.
//
// It does not own: anything of the protocol (package host, reached only
// through host.Server.Connect and host.Conn), or the process's streams
// and signals (cmd/mcphost).
package stdio
