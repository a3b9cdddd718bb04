/* A C plugin keeping a counter in a global (its instance's state) and
 * fetching URLs with mcp_http: built for wasm32-wasi and served by
 * cmd/mcphost's TestCKitHTTPRefusal, whose refused fetch must come back as
 * an error the plugin returns while its counter counts on. */
#include "../template/mcphost.h"

MCP_EXPORT("mcphost_abi_version") int32_t abi_version(void) { return 2; }

MCP_EXPORT("list_tools") int32_t list_tools(void) {
	static const char tools[] =
	    "{\"tools\":[{\"name\":\"count\",\"description\":\"Adds one to the counter.\",\"inputSchema\":{\"type\":\"object\"}},"
	    "{\"name\":\"fetch\",\"description\":\"GETs a URL.\","
	    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"}},\"required\":[\"url\"]}}]}";
	mcp_output(tools, sizeof tools - 1);
	return 0;
}

static int count;

static int32_t fetch(mcp_json req) {
	char *url = mcp_json_string(mcp_json_get(req, "arguments.url"), NULL);
	if (!url) return mcp_text_result("fetch: want {\"url\": \"…\"}", true);
	mcp_http_response resp;
	char *err = NULL;
	int32_t rc;
	if (!mcp_http(NULL, url, "{\"accept\":\"text/plain\"}", NULL, 0, &resp, &err)) {
		mcp_buf b = {0};
		mcp_buf_printf(&b, "fetch: %s (refused: %s)", err ? err : "failed", resp.refused ? "true" : "false");
		mcp_buf_write(&b, "", 1);
		rc = mcp_text_result(b.oom ? "fetch failed" : b.p, true);
		free(b.p);
	} else {
		mcp_buf b = {0};
		mcp_buf_printf(&b, "%d ", resp.status);
		mcp_buf_write(&b, resp.body, resp.n);
		mcp_buf_write(&b, "", 1);
		rc = mcp_text_result(b.oom ? "out of memory" : b.p, false);
		free(b.p);
		free(resp.body);
	}
	free(err);
	free(url);
	return rc;
}

MCP_EXPORT("call_tool") int32_t call_tool(void) {
	size_t n;
	char *in = mcp_input(&n);
	mcp_json req = mcp_json_get((mcp_json){in, n}, "request");
	char *name = mcp_json_string(mcp_json_get(req, "name"), NULL);
	int32_t rc;
	if (name && strcmp(name, "count") == 0) {
		char out[24];
		snprintf(out, sizeof out, "%d", ++count);
		rc = mcp_text_result(out, false);
	} else if (name && strcmp(name, "fetch") == 0) {
		rc = fetch(req);
	} else {
		rc = mcp_text_result("unknown tool", true);
	}
	free(name);
	free(in);
	return rc;
}
