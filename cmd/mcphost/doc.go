// Command mcphost is an MCP server whose tools, resources and prompts come
// from sandboxed WebAssembly plugins declared in plugins.toml.
//
//	mcphost serve    [--config plugins.toml] [--no-watch] [--audit-log FILE]
//	mcphost new      NAME [--lang go|c|assemblyscript|ts] [--dir D]
//	mcphost validate [--config plugins.toml] [--json]
//	mcphost call     [--config plugins.toml] <tool> ['<json args>']
//	mcphost read     [--config plugins.toml] <uri>
//	mcphost prompt   [--config plugins.toml] <name> ['<json args>']
//	mcphost go       <go arguments>
//	mcphost grants   list | revoke PLUGIN [HOST:PORT]   [--config plugins.toml]
//	mcphost version | --version
//	mcphost help | --help
//
// The commands are one table (commands in internal/cli/cli.go); a new command is one
// entry there. new renders the templates of a language kit
// (internal/cli/kits/<lang>/, the kits table in internal/cli/new.go).
//
// serve watches plugins.toml and the plugins' files and hot-reloads them
// (see package plugins' Manager), logging one line per reload;
// --watch-debounce sets how long files must stay quiet first (100ms).
//
// serve opens plugins.grants.toml beside plugins.toml (package consent's
// Grants), which makes a plugin's may_request_hosts and may_request_paths
// a question to the person behind the client; grants lists and revokes
// what it holds.
//
// serve --http also answers the /healthz and /readyz probes; --metrics
// ADDR serves Prometheus metrics (package metrics) on a listener of its
// own, off by default. OTEL_TRACES_EXPORTER=otlp makes serve send
// OpenTelemetry traces over OTLP/HTTP (internal/cli/traces.go builds the SDK from the
// standard OTEL_* variables and flushes it on every exit), off by default.
//
// Every subcommand accepts --log-level (debug|info|warn|error) and
// --log-format (text|json). Logs go to stderr; in serve mode stdout carries
// only MCP messages.
//
// This package is main alone; package cli (internal/cli) holds the flags,
// the slog handler, signal handling and wiring, and the logic lives in
// host, plugins and sandbox. The tests that drive the built command as its
// users do are under internal/systest, one package per job.
package main
