// Package extism is the sandbox's side of the Extism ABI, both ends of
// it:
//
//   - the kernel of the native runtime: the memory of one instance
//     ([Kernel]: blocks a guest reaches by i64 offsets, and the input,
//     output and error registers) and the kernel functions of
//     extism:host/env over it ([Funcs]), with go-sdk v1.7.1's names,
//     types and semantics (kernel.go, env.go); mcphost's bulk copies
//     between a block and the guest's memory ([IOFuncs], bulkio.go);
//     and the services of extism:host/env that need no more than the
//     kernel: the logs ([LogFuncs]) and an instance's vars ([Vars]);
//   - the Extism kinds of the sandbox's Guest ([V1], [V2]): a plugin's
//     questions as JSON envelopes over a byte-level [Caller], and its
//     output read in one validating pass (envelope.go, output.go), with
//     the Guest's data types ([ToolResult], [Lists], …), which the
//     sandbox root names by type aliases and its components answer with
//     too (guest.go).
//
// It does not own the runtime around the kernel: the sandbox root
// instantiates the functions on wazero, finds the calling instance's
// Kernel, and serves the rest of extism:host/env's services (config,
// HTTP) and the host functions, which need its limits, egress and
// tracing. The errors of the root's own types (*UnsupportedError,
// *CallError) are made through [Errors]. sandbox/internal/differential
// checks the kernel against go-sdk's.
//
// It is not API: only packages under sandbox/ can import it, and it
// imports nothing of the sandbox root (TestImportDirection).
package extism
