// Package internal holds nothing itself. Its subdirectories are of two
// kinds: test helpers, code that the tests of two or more rooms share,
// imported only from _test.go files and the test guests under testdata
// (internal/pdk); and the stdlibLeaves, standard-library-only packages
// that several rooms' production code imports (the Wasm binary reader,
// the cache entries' checksums).
//
// A room's own internal/ (host/internal, plugins/internal,
// sandbox/internal, sdk-guest/internal) holds the room's private
// packages, which Go lets only that room import, and its own test
// helpers (hosttest, wasmrun). Outside internal/ is the public surface,
// chosen on purpose (TestPublicSurface).
//
// The tests beside this file fail when a non-test file imports a test
// helper (TestInternalIsForTests), when an import runs against the
// house's direction, cmd → host → plugins → sandbox → abi, or reaches
// wazero outside sandbox (TestImportDirection), and when a package
// becomes public or stops being so (TestPublicSurface).
package internal
