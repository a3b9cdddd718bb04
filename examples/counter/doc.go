// Command counter keeps state the way that survives replicas and
// restarts: in guest.KV, the plugin's key-value state in mcphost's store.
// A variable in the plugin's memory would count per instance and per
// replica, and start again at every restart.
package main
