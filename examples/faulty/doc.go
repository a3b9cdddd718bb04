// Command faulty is a deliberately broken mcphost plugin. Host tests load
// it to check that every way a plugin can fail is contained: traps,
// endless loops, memory exhaustion, malformed and oversized output, slow
// calls and exits. Never configure it for real use.
package main
