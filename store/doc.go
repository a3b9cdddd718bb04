// Package store holds what replicas of one mcphost must share: task
// records, the messages that reach the replica running a call, consent
// grants, plugins' key-value state, per-identity rate counters and
// replica liveness.
//
// [Open] picks the implementation from the `[server] store` setting (or
// MCPHOST_STORE): empty gives [Memory], the in-process store that keeps
// single-replica behaviour with no extra process; `redis://` or
// `rediss://` gives [Redis], which any Redis-compatible server (Redis 7,
// Valkey 8; single node, Sentinel or Cluster) backs.
//
// It owns the keys and channels it writes (all under the "mcphost:"
// prefix), the scripts that make compare-and-swap, quota-charged writes
// and rate decisions atomic, and the sorting of failures into typed
// errors: [ErrNotFound], [ErrUnavailable] (the store cannot be reached:
// a caller that needs it fails with a clear error, one that does not
// keeps serving), [ErrQuota] and [ErrNotInteger].
//
// It does not know what it stores: records are opaque bytes, and the
// meaning of a task, a grant or a plugin's key belongs to host and
// plugins. It is a leaf: it imports the standard library and go-redis
// only, so host and plugins can both use it.
package store
