// Package ckit is mcphost's C guest kit as Go data: the template that
// `mcphost new --lang c` writes (a plugin with a typed tool, a resource
// and a prompt, the one-header SDK mcphost.h, a build script and a
// plugins.toml entry). The kit itself is C; see README.md.
package ckit
