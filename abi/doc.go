// Package abi is the contract between mcphost and its Wasm plugins.
//
// A plugin is an Extism module: every export takes bytes in and gives bytes
// out through the Extism kernel (extism:host/env), and every payload is JSON
// in MCP's own shapes. The exports are hyper-mcp's "v2" ABI, so its plugins
// run unmodified:
//
//	export                   input                                   output
//	list_tools               {"context":{…}}                          ListToolsResult
//	call_tool                {"request":CallToolParams,"context":{…}}  CallToolResult
//	list_resources           {"context":{…}}                          ListResourcesResult
//	list_resource_templates  {"context":{…}}                          ListResourceTemplatesResult
//	read_resource            {"request":{"uri":…},"context":{…}}      ReadResourceResult
//	list_prompts             {"context":{…}}                          ListPromptsResult
//	get_prompt               {"request":{"name","arguments"},…}       GetPromptResult
//	complete                 {"request":CompleteParams,"context":{…}} CompleteResult
//
// A missing export means the plugin contributes none of that kind. The older
// v1 ABI of mcp.run servlets ("describe" + "call", tools only) is detected by
// its export names: a module exporting both "describe" and "call" is v1.
//
// mcphost's own additions are versioned by [Version] and announced by the
// optional export [ExportABIVersion], which returns the version as its i32
// result; [ExportCallToolFrame] takes a tool call as a [CallFrame]
// instead of an envelope, and [ExportCallToolMembers] the same frame with
// the arguments' members indexed, answered with JSON or a result frame
// ([AppendResultFrame]); [ExportListSkills] hands the host a guest's skill files
// ([ListSkillsResult]). Host functions live in the extism:host/user namespace, under the
// names hyper-mcp uses ([HostLog], [HostProgress], …).
//
// This package imports only the standard library and builds for
// GOOS=wasip1, because the guest SDK (sdk-guest) shares these types; so
// does its sub-package jsonscan, the JSON scanner that host and guest
// share.
// README.md beside this file shows every payload as JSON.
package abi
