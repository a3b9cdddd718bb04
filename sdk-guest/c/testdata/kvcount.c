/* A C plugin keeping a counter in its key-value state (mcp_kv_increment),
 * and a value (mcp_kv_set, mcp_kv_get): built for wasm32-wasi and served
 * by cmd/mcphost's TestCKitKV on two replicas sharing a store. */
#include "../template/mcphost.h"

MCP_EXPORT("mcphost_abi_version") int32_t abi_version(void) { return 1; }

MCP_EXPORT("list_tools") int32_t list_tools(void) {
	static const char tools[] =
	    "{\"tools\":[{\"name\":\"count\",\"description\":\"Adds one to the counter.\",\"inputSchema\":{\"type\":\"object\"}},"
	    "{\"name\":\"echo\",\"description\":\"Stores text, then reads it back.\","
	    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}]}";
	mcp_output(tools, sizeof tools - 1);
	return 0;
}

static int32_t fail(char *err) {
	int32_t rc = mcp_text_result(err ? err : "kv failed", true);
	free(err);
	return rc;
}

MCP_EXPORT("call_tool") int32_t call_tool(void) {
	size_t n;
	char *in = mcp_input(&n);
	mcp_json req = mcp_json_get((mcp_json){in, n}, "request");
	char *name = mcp_json_string(mcp_json_get(req, "name"), NULL);
	char *err = NULL;
	int32_t rc;
	if (name && strcmp(name, "count") == 0) {
		int64_t sum;
		if (!mcp_kv_increment("count", 1, &sum, &err)) {
			rc = fail(err);
		} else {
			char out[24];
			snprintf(out, sizeof out, "%lld", (long long)sum);
			rc = mcp_text_result(out, false);
		}
	} else if (name && strcmp(name, "echo") == 0) {
		size_t tn;
		char *text = mcp_json_string(mcp_json_get(req, "arguments.text"), &tn);
		char *value = NULL;
		size_t vn;
		bool found = false;
		if (!text) {
			rc = mcp_text_result("echo: want {\"text\": \"…\"}", true);
		} else if (!mcp_kv_set("echo", text, tn, &err) || !mcp_kv_get("echo", &value, &vn, &found, &err)) {
			rc = fail(err);
		} else {
			rc = mcp_text_result(found ? value : "(not found)", !found);
		}
		free(value);
		free(text);
	} else {
		rc = mcp_text_result("unknown tool", true);
	}
	free(name);
	free(in);
	return rc;
}
