package host

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/host/internal/protocol"
)

// MCP and mcphost error codes used on the wire; JSON-RPC's own are in
// package jsonrpc.
const (
	// codeTimeout is mcphost's code for a plugin call that ran out of time
	// while serving a JSON-RPC-level result (resources/read, prompts/get,
	// completion/complete); it is also the gateway's "server not found".
	codeTimeout = -32001
	// codeResourceNotFound is MCP's "Resource not found" (2025-11-25).
	codeResourceNotFound = -32002
	// The codes the 2026-07-28 revision adds.
	codeMissingCapability   = protocol.CodeMissingCapability
	codeUnsupportedProtocol = protocol.CodeUnsupportedProtocol
)

// ErrNotSupported is returned by a [sandbox.Peer] request the client cannot
// serve: it did not declare the capability, or its protocol version does not
// define the request.
var ErrNotSupported = errors.New("not supported by the client")

// ErrClosed is returned by a [sandbox.Peer] request whose session ended
// before the client answered.
var ErrClosed = errors.New("session closed")

// ClientError is a JSON-RPC error the client returned for a server→client
// request (for example -1 when the user rejected a sampling request).
type ClientError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("client error %d: %s", e.Code, e.Message)
}
