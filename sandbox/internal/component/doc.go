// Package component runs WebAssembly components (the Component Model,
// WASI 0.2) on wazero, which runs only core modules.
//
// It owns: the component binary's section walker and type decoder
// ([Decode]: header \0asm 0x0d layer 1, core modules, core instances,
// aliases, types, canon lift/lower with their memory, realloc,
// string-encoding and post-return options, resource new/drop/rep,
// imports and exports); instantiating a component honestly from those
// sections ([Compile], [Compiled.Instantiate]): every core module is
// compiled with its imports renamed to what the component's instances
// resolve them to, and instantiated in section order, so wit-component's
// shim, adapter and fixup modules wire themselves as they would under any
// host; the canonical ABI (lift and lower of every value type, flattening,
// spilling of more than 16 flat parameters, return pointers, post-return,
// utf8 and utf16 strings); the handle table and what the host holds for
// each instance (budget.go); and the mapping of exported functions to MCP
// tools and of WIT values to and from JSON (tools.go, json.go).
//
// Imports are served by whatever implementations [Compile] is given,
// keyed by [Key] ("interface#function"): a [HostFunc] takes and returns
// Go values as [Case] documents, and objects it hands out become handles
// (a [Dropper] is told when its handle goes, a [Sized] one is charged to
// the instance, and a growing one charges itself with
// [Instance.Charge]). The WASI 0.2 interfaces mcphost serves are
// sandbox/internal/wasip2's, which imports this package; this one knows no WASI
// interface by name.
//
// Nested components are read once into templates (decode.go) and
// resolved for each instantiation, bounded in depth and in total work;
// each instantiation gets its own core instances, and a function one
// component lifts and another lowers is called through the host within
// the one instance.
//
// Refused, each with an [UnsupportedError] naming it: component start and
// value sections, core type sections, component and core-module imports,
// async functions and built-ins, streams, futures, error-context,
// fixed-size lists, 64-bit memories, latin1+utf16 strings. A malformed
// binary's error names the section, the item and the cause.
//
// It ignores: what any imported interface means (sandbox/internal/wasip2), limits
// beyond the two of [Limits], pools, timeouts, how a guest is stopped
// (Compile takes the sandbox's rewrite of each core module, the loop poll)
// and the sorting of failures (the sandbox package runs a component's
// instances like a core module's); TOML; and JSON-RPC.
package component
