// Package sandbox runs Extism-ABI Wasm modules under wazero with limits.
//
// It is the only package in mcphost that imports wazero or the Extism Go SDK.
// It owns: compiling modules once through an on-disk compilation cache,
// pools of warm instances, memory and time limits, WASI wiring (real clocks,
// crypto random, guest stdout/stderr captured to the log and never to the
// process's stdout), Extism HTTP restricted to allowed hosts (redirects
// included), allowed paths (mounted through sandbox/rootfs, which keeps
// every path and symlink beneath its mount; any runtime gets its
// wazero.FSConfig from mountFS), host functions, and sorting failures into
// typed errors ([*CallError] with a [Kind]).
//
// It knows nothing about TOML, JSON-RPC or sessions. Host functions reach the
// MCP session through a [Peer] carried by the call's context ([WithPeer]).
//
// # Calls and instances
//
// [Engine.Load] compiles a module once and keeps a pool of up to
// Limits.Instances instances; each [Module.Call] takes one, runs the export
// under the module's timeout and gives it back. An instance is thrown away
// after any failure but a guest error (error_set or a non-zero return), an
// oversized output, an oversized input or a missing export: a Go guest that
// trapped may look healthy and die later. The next call creates a fresh
// instance (about 2 ms plus 2.6 ms of _initialize for a Go guest).
//
// Timeouts stop guests in endless loops (wazero's CloseOnContextDone) and
// guests asleep in WASI poll_oneoff (our own nanosleep wakes up when the
// call ends). A host function that blocks is bounded only by ctx, which is
// why a [Peer] must honour it.
//
// # Host functions
//
// The functions of abi.HostNamespace have hyper-mcp's exact signatures,
// because wazero refuses a guest whose imports differ in type: a function
// takes an i64 offset of a JSON block only if it has a payload
// (notify_tool_list_changed and list_roots take none), and returns an i64
// offset of a JSON reply only if it is a request (create_message,
// create_elicitation, list_roots). The table is abi.HostFuncs.
//
// # Process-wide settings
//
// go-sdk v1.7.1 has three process-wide knobs, which [NewEngine] sets: it
// unsets EXTISM_ENABLE_WASI_OUTPUT (and again before every new instance),
// which would send guest stdout to os.Stdout; it sets go-sdk's log level to
// Info; and it makes http.DefaultClient, which go-sdk's http_request uses,
// re-check every redirect against the calling plugin's allowed hosts.
//
// # Keeping the SDK replaceable
//
// go-sdk v1.7.1 costs about 13 KB of allocation per kernel call, some
// 190 KB per tiny Go call, mostly its own overhead. The package's surface is
// kept narrow (compile, instantiate, call, close, typed errors) so that a
// native implementation of the extism:host/env kernel can replace the SDK
// behind the same API, with the SDK kept as a differential-test oracle.
package sandbox
