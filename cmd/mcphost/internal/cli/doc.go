// Package cli is the mcphost command: the command table, flags, the slog
// handler on stderr, signal handling, and the wiring of host, plugins and
// sandbox behind each subcommand (the synopsis is package main's doc).
// cmd/mcphost's main calls Run.
//
// It lives under internal/ so that only the command imports it; Build
// serves the in-process benchmarks. Its tests are units (flags, help,
// templates, the HTTP serve wiring); the tests that drive the built binary
// are in ../systest.
package cli
