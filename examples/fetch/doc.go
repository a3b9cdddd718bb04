// Command fetch is an mcphost plugin that fetches web pages through the
// host: the host makes the request, so the plugin reaches only the hosts
// its allowed_hosts list permits. HTML comes back as readable text.
package main
