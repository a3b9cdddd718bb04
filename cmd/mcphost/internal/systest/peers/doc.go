// Package peers holds mcphost's benchmarks (stdio, HTTP, start-up, reload,
// cold start, RSS) against peer servers, and the tests of the release
// build. TestMain also serves the limit peer when the binary is started
// again as one.
package peers
