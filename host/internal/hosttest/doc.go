// Package hosttest holds the test fixtures that package host and its
// transports' packages share: a fake plugin set (Fixture: tools of every
// behaviour, resources, templates, prompts, completion, built as native
// modules), registries and generations built from it, and the bounded
// waits (Guard, Recv) that keep a failing test from hanging.
//
// It imports neither host nor a transport, so that host's own in-package
// tests can use it. It is for tests only.
package hosttest
