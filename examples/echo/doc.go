// Command echo is the smallest useful mcphost plugin: one tool that returns
// its argument. mcphost's latency benchmarks use it, so keep it tiny.
package main
