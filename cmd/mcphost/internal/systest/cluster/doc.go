// Package cluster holds the system tests of replicas: two or more mcphost
// processes behind HAProxy, sharing state through Redis, draining, and
// per-identity limits.
package cluster
