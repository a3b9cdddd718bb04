// Package stateless declares the plugin that imports it stateless: it
// keeps nothing from one call to the next (no counters, no tools added at
// run time, no Extism vars), so any instance may serve any call.
//
//	import _ "github.com/mcphost/mcphost/sdk-guest/stateless"
//
// mcphost then serves the plugin from a warm pool of instances
// ([server] max_instances) and runs its calls in parallel. Without this
// import a plugin runs the way hyper-mcp runs every plugin: one
// long-lived instance, calls one at a time, its state kept until a fault.
// A plugin's own max_instances in plugins.toml overrides either way.
//
// The declaration is the presence of the export abi.ExportStateless,
// which mcphost reads from the binary before loading it; it is never
// called.
package stateless
