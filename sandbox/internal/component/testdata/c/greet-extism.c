/* The kinds component's greet tool as an Extism plugin (sdk-guest/c), the
 * peer BenchmarkComponentVsExtismC measures a component call against: the
 * same JSON in, the same result out. */
#include "mcphost.h"

MCP_EXPORT("list_tools") int32_t list_tools(void) {
	static const char tools[] =
	    "{\"tools\":[{\"name\":\"greet\",\"inputSchema\":{\"type\":\"object\","
	    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}]}";
	mcp_output(tools, sizeof tools - 1);
	return 0;
}

MCP_EXPORT("call_tool") int32_t call_tool(void) {
	size_t n, ln;
	char *in = mcp_input(&n);
	char *name = mcp_json_string(mcp_json_get((mcp_json){in, n}, "request.arguments.name"), &ln);
	if (!name) {
		free(in);
		return mcp_text_result("greet: want {\"name\": \"…\"}", true);
	}
	mcp_buf s = {0}, b = {0};
	mcp_buf_puts(&s, "¡hola, ");
	mcp_buf_puts(&s, name);
	mcp_buf_puts(&s, "!");
	mcp_buf_puts(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
	mcp_buf_json_string(&b, s.p, s.len);
	mcp_buf_puts(&b, "}],\"structuredContent\":{\"result\":");
	mcp_buf_json_string(&b, s.p, s.len);
	mcp_buf_puts(&b, "}}");
	free(s.p);
	free(name);
	free(in);
	return mcp_buf_output(&b);
}
