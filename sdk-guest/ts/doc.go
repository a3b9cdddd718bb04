// Package tskit is mcphost's TypeScript guest kit as Go data: the template
// that `mcphost new --lang ts` writes, a plugin that is a WebAssembly
// component (a WIT world with one tool, its TypeScript implementation,
// build.mjs running tsc and componentize-js, a test through `mcphost
// call`, a package.json and a plugins.toml entry). The kit itself is
// TypeScript and JavaScript; see README.md. It owns the template, not how
// mcphost runs components (sandbox/internal/component).
package tskit
