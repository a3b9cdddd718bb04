// Package differential holds the differential tests of the sandbox's
// native Extism kernel, and nothing else: every guest we have (the test
// guest, generated modules, the examples built with the guest SDK) runs on
// the kernel, with the loop poll and under close-on-done, and on the
// Extism Go SDK (sandbox/internal/oracle), each through the same Engine,
// and a caller must see the same outputs, failures and fault kinds.
//
// They build Go guests and compile each several times, so they live apart
// from sandbox's unit tests: `go test ./sandbox` stays a unit run, and
// `go test ./sandbox/...` (or scripts/test.sh) runs these too.
package differential
