/* A C plugin that keeps a count in a global (count) and heeds a
 * cancellation (wait: logs to the client, then loops until mcp_cancelled()
 * says the client cancelled the call): served by cmd/mcphost's
 * TestCKitCancel, where the count goes on across a cancelled wait. */
#include "../template/mcphost.h"

static int64_t count;

MCP_EXPORT("list_tools") int32_t list_tools(void) {
	static const char tools[] =
	    "{\"tools\":[{\"name\":\"count\",\"description\":\"Adds one to the count.\",\"inputSchema\":{\"type\":\"object\"}},"
	    "{\"name\":\"wait\",\"description\":\"Waits until the call is cancelled.\",\"inputSchema\":{\"type\":\"object\"}}]}";
	mcp_output(tools, sizeof tools - 1);
	return 0;
}

MCP_EXPORT("call_tool") int32_t call_tool(void) {
	size_t n;
	char *in = mcp_input(&n);
	char *name = mcp_json_string(mcp_json_get((mcp_json){in, n}, "request.name"), NULL);
	int32_t rc;
	if (name && strcmp(name, "count") == 0) {
		char out[24];
		snprintf(out, sizeof out, "%lld", (long long)++count);
		rc = mcp_text_result(out, false);
	} else if (name && strcmp(name, "wait") == 0) {
		mcp_log("info", "wait: waiting for the cancellation");
		while (!mcp_cancelled()) {
		}
		rc = mcp_text_result("cancelled", true);
	} else {
		rc = mcp_text_result("unknown tool", true);
	}
	free(name);
	free(in);
	return rc;
}
