// Package clients holds the system tests that drive mcphost with other
// clients: the TypeScript SDK, the MCP Inspector, a browser rendering MCP
// Apps, and traces read back from Jaeger.
package clients
