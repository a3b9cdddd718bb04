// Package extism is the Extism kernel of the sandbox's native runtime:
// the memory of one instance ([Kernel]: blocks a guest reaches by i64
// offsets, and the input, output and error registers) and the kernel
// functions of extism:host/env over it ([Funcs]), with go-sdk v1.7.1's
// names, types and semantics.
//
// It does not own the runtime around them: the sandbox root instantiates
// the functions on wazero, finds the calling instance's Kernel, and
// serves extism:host/env's services (config, vars, HTTP, logs) and the
// host functions, which need its limits, egress and tracing.
// sandbox/internal/differential checks the kernel against go-sdk's.
//
// It is not API: only packages under sandbox/ can import it, and it
// imports nothing of the sandbox root (TestImportDirection).
package extism
