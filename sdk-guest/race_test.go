//go:build race

package guest_test

// Under the race detector wazero's compiler is instrumented too and takes
// tens of seconds per Go module, so the tests that load modules only
// build them. They exercise no concurrency of this package.
const raceEnabled = true
