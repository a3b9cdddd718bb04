package jsonrpc

import (
	"errors"
	"fmt"
)

// The error codes JSON-RPC 2.0 reserves. Codes an application defines
// (MCP's -32002 "resource not found", mcphost's -32001 timeout, …) belong
// to the application, not to this package.
const (
	CodeParseError     = -32700 // the bytes are not JSON
	CodeInvalidRequest = -32600 // JSON, but not a valid request object
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
)

// Error is a JSON-RPC error object. A handler returns one to choose the
// code its caller sees; [ErrorFor] turns any other error into -32603.
type Error struct {
	Code    int
	Message string
	Data    any // marshalled with encoding/json; nil means no data
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Errorf returns an Error with code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns a -32602 Error with a formatted message.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, format, args...)
}

// ErrorFor returns the error object to send for err: err itself (or the
// *Error it wraps), or else a -32603 carrying err's text.
func ErrorFor(err error) *Error {
	var re *Error
	if errors.As(err, &re) {
		return re
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}
