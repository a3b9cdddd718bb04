// Package internal holds nothing itself; its subdirectories are test
// helpers: code that the tests of two or more packages share, imported
// only from _test.go files and the test guests under testdata
// (internal/pdk).
//
// A top-level folder's own internal/ (host/internal/tasks) is different:
// it holds that folder's production rooms, off the public surface, and
// the test helpers there are listed by name (testHelpers in
// layout_test.go). The tests beside this file fail when a non-test file
// imports a test helper (TestInternalIsForTests), and when an import runs against the
// house's direction, cmd → host → plugins → sandbox → abi, or reaches
// wazero outside sandbox (TestImportDirection).
package internal
