// Package logtest records slog output for the tests of more than one
// package (plugins, plugins/config, plugins/internal/progress), so that tests can
// check what was logged, written once.
//
// It owns the recording handler and its "LEVEL msg k=v" rendering (the
// "dur" attribute is left out, being never the same twice); it is imported
// only by tests.
package logtest
