package host

import (
	"encoding/json"
	"errors"
	"fmt"
)

// JSON-RPC and MCP error codes used on the wire.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	// codeTimeout is mcphost's code for a plugin call that ran out of time
	// while serving a JSON-RPC-level result (resources/read, prompts/get,
	// completion/complete); it is also the gateway's "server not found".
	codeTimeout = -32001
	// codeResourceNotFound is MCP's "Resource not found" (2025-11-25).
	codeResourceNotFound = -32002
)

// rpcError is a JSON-RPC error object. Handlers return it to choose the code;
// any other error becomes -32603.
type rpcError struct {
	Code    int
	Message string
	Data    any // marshalled with encoding/json; nil means no data
}

func (e *rpcError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidParams(format string, args ...any) *rpcError {
	return errorf(codeInvalidParams, format, args...)
}

// toRPCError turns any handler error into the object sent on the wire.
func toRPCError(err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	return &rpcError{Code: codeInternal, Message: err.Error()}
}

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
