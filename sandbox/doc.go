// Package sandbox runs Wasm plugins under wazero with limits: Extism-ABI
// core modules and WebAssembly components.
//
// It and its subpackages (sandbox/internal/component, sandbox/internal/wasip2,
// sandbox/internal/rootfs, sandbox/internal/guestmem, which keeps guests' linear memories
// outside the Go heap, …) are the only code of the binary that imports
// wazero. Its tests import the Extism Go SDK as an oracle
// (sandbox/internal/oracle, run by the differential tests of
// sandbox/internal/differential; the binary never links it), as does
// sdk-guest/internal/wasmrun, the test helper that runs the guest SDK's
// own tests. It owns: compiling modules once through an
// on-disk compilation cache that checks its entries and heals
// (compilecache.go) and keeps the module as prepared for compiling
// (prepared.go), telling a file that is not a loadable module by its
// header ([FormatError], wasmformat.go), pools of warm instances, memory and time
// limits, WASI wiring (real clocks, crypto random, guest stdout/stderr
// captured to the log and never to the process's stdout), the Extism
// kernel, outbound HTTP checked at dial time (egress.go), allowed paths
// (mounted through sandbox/internal/rootfs, which keeps every path and symlink
// beneath its mount; every backend gets its wazero.FSConfig from mountFS),
// host functions, and sorting failures into typed errors ([*CallError]
// with a [Kind]).
//
// It also runs WebAssembly components (sandbox/internal/component, with the WASI
// 0.2 host functions of sandbox/internal/wasip2, wired in componentbackend.go): a
// component is told from a core module by its
// header and runs on its own loader whatever the runtime, with the same
// pools, limits and fault sorting.
//
// # The Guest
//
// Package plugins asks a plugin its questions through a [Guest]
// ([NewGuest]): its lists, a tool call, a resource read, a prompt, a
// completion, a roots change. There is one kind of Guest per kind of
// plugin, each speaking its own wire (guest.go): an Extism v1 plugin gets
// {"params":…} on describe and call, a v2 (hyper-mcp) plugin
// {"request":…,"context":…} envelopes (both in sandbox/internal/extism,
// with the Guest's data types, which this package names by aliases), and
// a component is called through its WIT types, the tool found by its
// place in the list and its arguments converted once from JSON to WIT
// values, with no envelope in between (componentbackend.go). A component's [Module]
// exports no Extism function: [Module.Call] refuses every export.
//
// It knows nothing about TOML, JSON-RPC or sessions. Host functions reach the
// MCP session through a [Peer] carried by the call's context ([WithPeer],
// or a caller's own context type answering [IsPeerKey]'s key, which saves
// a context.WithValue per call).
//
// # Calls and instances
//
// [Engine.Load] compiles a module once and keeps a pool of up to
// Limits.Instances instances; each [Module.Call] takes one, runs the export
// under the module's timeout and gives it back. Instances beyond the first
// that stay idle for 30 s are closed, so a burst's memory comes back. An instance is thrown away
// after any failure but a guest error (error_set or a non-zero return), an
// oversized output, an oversized input or a missing export: a Go guest that
// trapped may look healthy and die later. The next call creates a fresh
// instance (about 2 ms plus 2.6 ms of _initialize for a Go guest).
//
// With [EngineOptions].InterpretUntilCompiled (serve), a core module
// whose compiled code is not in the cache loads on wazero's interpreter
// (~0.2 s for a 4 MB Go guest instead of ~1.5 s) and is compiled in the
// background; when the compiled code is ready and warmed, new calls move
// to it, calls running on the interpreter finish there, and the
// interpreter is closed after its last one (tier.go). A guest's state in
// its instance cannot move, so an instance of a module that keeps state
// (Limits.KeepsState) and has served a call stays on the interpreter
// until it fails or the module closes. Background compiles start only
// while no load runs ([Engine.Loading] marks one beyond Load), one per
// CPU, an open module's first; a module closed before its compile ran
// is still compiled, for the cache.
//
// Timeouts stop guests in endless loops and guests asleep in WASI
// poll_oneoff (our own nanosleep wakes up when the call ends). On the
// native runtime a loop is stopped by a poll the guest was rewritten to
// run at every loop header (sandbox/internal/looppoll, interrupt.go): the call's
// end (its instance's timer, or the request's context, callclock.go)
// sets a global, the guest traps at its next loop header,
// and the call fails as under wazero's CloseOnContextDone, which remains
// the mechanism of any module the rewriter refuses (the load logs why).
// Both work the same on the interpreter. A component's core modules are
// all rewritten, and its instance's poll sets the globals of each of its
// core instances (componentbackend.go). Either way an interrupted instance is
// thrown away. A host function that blocks is bounded only by ctx, the
// instance's clock on a polled instance, which carries the call's
// deadline; that is why a [Peer] must honour it.
//
// A call whose request ends first (the client cancelled it) is not
// interrupted at once (cancel.go): its context is done, so blocking host
// functions return, and the guest can ask (abi.CallCancelled), but it is
// interrupted only after Limits.CancelGrace. A guest that returns within
// it keeps its instance; the call fails with KindCanceled either way, and
// the log says which happened.
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
// # The kernel
//
// Every module runs on our own implementation of the Extism kernel
// (extism:host/env: its memory and functions in sandbox/internal/extism,
// wired in kernelenv.go and native.go) as Go functions on wazero
// ([RuntimeNative]). Kernel memory is a Go byte slice per instance, so
// input and output move with one copy each; one wazero runtime per module
// holds WASI, the kernel and the host functions once, and each instance is
// an anonymous instance of the one compiled guest. The Extism Go SDK
// v1.7.1 is the reference it is tested against: sandbox/internal/oracle
// implements the same backend interface on go-sdk
// (sandbox/internal/coreruntime, the seam a Load's context can choose a
// runtime through), and sandbox/internal/differential runs every guest on
// both and compares outputs, errors and fault kinds. They
// differ on purpose where go-sdk is unsafe: input_load_u64 past the input
// returns 0 (go-sdk reads kernel memory), and outbound HTTP.
//
// # Outbound HTTP
//
// http_request goes through the module's own http.Client, whose dialer is
// the only place Limits.AllowedHosts and Limits.AllowPrivateNetworks are
// enforced (egress.go): for the first request and every redirect hop it
// matches the host and port against the rules, resolves a name once,
// refuses a name that resolves to a loopback, private, link-local, CGNAT
// or unspecified address unless the rule is an IP literal or "localhost"
// or private networks are allowed, and dials only the addresses it
// checked. A refusal is a [*RefusedError] that names the plugin, the
// host, the address and the plugins.toml key that would allow it, and is
// logged as a rate-limited warning. Extism's http_request fails the call
// with it (the instance is thrown away: the ABI has no error to give);
// mcphost's http host function (abi.HostHTTP, services.go) and wasi:http
// give it to the guest as an error, and the instance and its state stay.
// The client ignores proxy settings in the environment.
//
// A destination the rules refuse and Limits.MayRequestHosts names goes
// to Limits.Consent, an interface the caller gives (package plugins/consent
// asks a person through the call's Peer); the sandbox only asks and obeys. A
// connection allowed that way is closed after its response, never pooled
// (consentTransport). Limits.MayRequestPaths are mounted like allowed
// paths, each behind a rootfs.Gated gate (instance.gate): in each call the
// first read and the first write under the mount ask Consent, and the
// guest sees EACCES (and the log a line naming allowed_paths) unless it
// allows; the files it opened under the mount are closed when the call
// ends (rootfs.Handles), so a descriptor kept for a later call fails with
// EACCES there. A guest's own request to the client that uses the
// input key reserved for those questions (abi.HoldsConsentKey) is
// refused, so no guest can word one.
//
// # Traces
//
// With [EngineOptions].Tracer set, loads, guest calls and the host
// functions they make (outbound HTTP with its allowed_hosts decision and
// the trace context injected into its headers, file opens, secret reads by
// name, requests to the client) are spans (trace.go), started on
// OpenTelemetry's trace API (go.opentelemetry.io/otel/trace), the one the
// host's spans use: the caller brings the SDK and the exporter, and
// [EngineOptions].Propagator the headers the trace context travels in.
//
// Nothing here changes process-wide state.
package sandbox
