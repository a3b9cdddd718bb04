// Package tools is a module of its own holding the programs mcphost's
// tests run but mcphost does not ship: their dependencies stay out of the
// main go.mod. Build one with `go build ./testop` from this directory.
package tools
