// Command conformance is the fixture plugin for the official MCP
// conformance suite (@modelcontextprotocol/conformance): it provides
// exactly the tools, resources, prompts and completions the suite's server
// scenarios call, with the payloads of the suite's reference server.
// mcphost serving this plugin alone should pass the whole suite.
package main
