// Package tools is a module of its own holding the programs mcphost's
// tests run but mcphost does not ship, so that their dependencies stay
// out of the main go.mod: testop, the OpenID Provider of the auth tests,
// and benchpeer, the SDK servers BenchmarkPeers measures mcphost against.
// Build one with `go build ./testop` from this directory. Jaeger (the
// trace test's backend) is a `tool` line of go.mod, built by
// scripts/jaeger.sh: `go build github.com/jaegertracing/jaeger/cmd/jaeger`.
package tools
