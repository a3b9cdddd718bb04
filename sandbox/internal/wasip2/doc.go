// Package wasip2 is the host side of the WASI 0.2 interfaces mcphost
// serves to WebAssembly components: what each imported function does.
//
// It owns, as [component.HostFunc]s keyed by [component.Key] ([Host]):
// wasi:cli (environment, exit, stdio streams, no terminal), wasi:clocks,
// wasi:random, wasi:io (errors, pollables that block until the call's
// context ends, streams), wasi:filesystem over the preopens it is given
// (filesystem.go), wasi:config/store (config.go), wasi:logging
// (logging.go), wasi:keyvalue/store and atomics in both drafts
// (keyvalue.go), and wasi:http's types and outgoing handler (http.go),
// whose request-options bound the phases of a request, always inside the
// call's context. Each reads one instance's [State], which the sandbox
// fills from the plugin's limits. The host objects it hands out (streams,
// descriptors, fields, requests, bodies) are [component.Dropper]s, and
// what they hold is charged to their instance ([component.Instance.Charge]),
// so the plugin's memory limit bounds them.
//
// wasi:sockets is absent on purpose: its functions trap. The incoming half
// of wasi:http (serving requests) is not provided.
//
// It ignores: the Component Model itself (decoding, the canonical ABI,
// handles and instances are sandbox/internal/component's, which this package
// imports and which never imports it); how the sandbox confines what it
// is given ([Preopen]'s FS is a sandbox/internal/rootfs mount, [State].HTTP the
// plugin's egress-checked client, [State].KV the plugin's store; this
// package applies the header rules of wasi:http and its body limit, and
// trusts the rest to them); pools, timeouts and the sorting of failures
// (sandbox); TOML and JSON-RPC.
package wasip2
