// Command palette is an MCP App (SEP-1865) written with sdk-guest: the
// palette tool's result is shown by an HTML page (app.html, embedded)
// that the client renders in a sandboxed iframe, and the page's button
// calls the mix tool through the client.
package main
