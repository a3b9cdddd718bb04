// Package internal holds nothing itself; its subdirectories, and every
// other internal/ directory in the module (host/internal,
// sdk-guest/internal), are test helpers: code that the tests of two or
// more packages share, imported only from _test.go files and the test
// guests under testdata (internal/pdk). A room's own internal/ folder may
// also hold code of that room that is not API, imported by the room alone
// and never importing its root back (sandbox/internal/coreruntime, the
// seam between the sandbox's Engine and a runtime of core modules).
//
// Production code lives in the package that owns its job (the step
// logger a plugin load uses is plugins/progress, not here), so that a
// file's folder tells a reader what it may touch. The tests beside this
// file fail when a non-test file outside an internal/ directory imports
// one other than its own room's (TestInternalIsForTests), and when an
// import runs against the house's direction, cmd → host → plugins →
// sandbox → abi, or reaches wazero outside sandbox (TestImportDirection).
package internal
