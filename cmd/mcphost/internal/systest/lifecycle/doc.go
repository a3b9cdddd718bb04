// Package lifecycle holds the system tests of a server's life: reloads
// (config edits, Wasm and Go-source plugins, the hammer), startup with slow
// or stuck plugins, signals and shutdown, state kept across calls,
// cancellation and refusals.
package lifecycle
