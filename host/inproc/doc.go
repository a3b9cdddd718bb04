// Package inproc is mcphost's in-process transport: Call serves one
// request on a private connection that has been initialized like a real
// client's, through the same seam (host.Server.Connect) and dispatch path
// as every other transport, so `mcphost call` exercises the whole stack.
//
// It owns telling the response apart from the notifications the request
// emits. It does not own the protocol (package host) or any I/O.
package inproc
