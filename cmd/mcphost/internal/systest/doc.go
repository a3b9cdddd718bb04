// Package systest holds the helpers of mcphost's system tests: building
// the binary once per test binary, starting `mcphost serve` over stdio or
// HTTP with an MCP client attached, replicas, upstreams and the person
// behind a client, and the Wasm guests the tests build. The tests
// themselves live in its sub-packages, one per job, so that each test
// binary finishes well within go test's default timeout:
//
//	core       the end-to-end client, eras, tasks, scripts (testscript),
//	           metrics, hostile guests, skills and apps files
//	lifecycle  reloads, startup, signals, state kept across calls and
//	           cancellation, refusals
//	consent    may_request_* questions, grants and their store
//	kits       the language kits' templates, components, the author loop
//	cluster    replicas behind HAProxy, Redis-backed sharing, drain, limits
//	clients    the TypeScript SDK, the Inspector, a browser, Jaeger
//	peers      benchmarks against other servers, and the release build
//
// Helpers used by one package stay in that package's tests; what two or
// more share is here, once.
package systest
