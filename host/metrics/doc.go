// Package metrics exports what mcphost does in the Prometheus text format,
// with github.com/prometheus/client_golang, so that host and plugins stay
// free of any metrics library: plugins reports tool calls through its
// small [plugins.Observer] interface, host gives a [host.Stats] snapshot
// that is read at scrape time, and cmd/mcphost reports reloads and serves
// [Metrics.Handler] on its own listen address (--metrics).
//
// The series, all prefixed mcphost_:
//
//   - tool_call_duration_seconds{plugin,tool}: a histogram of every tool
//     call (its _count is the number of calls);
//   - tool_faults_total{plugin,kind}: failed calls by fault kind (trap,
//     timeout, out_of_memory, … see [plugins.Fault]);
//   - reloads_total{result}: loads of plugins.toml ("ok", "config_error"),
//     and reload_plugin_failures_total: plugins that failed to load;
//   - sessions{era}, listeners{era}, inflight_requests: read from the
//     server when scraped;
//   - pool_instances{plugin} and pool_idle_instances{plugin}: each
//     plugin's instance pool, read when scraped;
//   - the Go runtime and process collectors (go_*, process_*).
//
// The per-call cost is one map lookup under a read lock and one histogram
// observation: no allocation once a tool's series exists.
//
// It does not own: the listener or its flag (cmd/mcphost), or what counts
// as a fault (package plugins).
package metrics
