// Package askit is mcphost's AssemblyScript guest kit as Go data: the
// template that `mcphost new --lang assemblyscript` writes (a plugin with a
// typed tool, a resource and a prompt on the official @extism/as-pdk, the
// MCP helpers mcphost.ts, a package.json and a plugins.toml entry). The
// kit itself is AssemblyScript; see README.md.
package askit
