// Package oracle runs core modules on the Extism Go SDK (go-sdk v1.7.1),
// the reference the sandbox's native kernel is tested against: [New] is a
// coreruntime.New, so a module loaded with it is served by the same
// Engine and Module code as on the kernel, and a test compares what a
// caller sees (sandbox/internal/differential). It is a test helper; the
// binary never links go-sdk.
//
// Where go-sdk is unsafe the native kernel differs on purpose, and no
// differential case covers it: input_load_u64 past the input returns 0
// (go-sdk reads kernel memory), and outbound HTTP is checked at dial time
// on the address dialled, redirects included (go-sdk checks the first
// URL's name and follows redirects with http.DefaultClient).
package oracle
