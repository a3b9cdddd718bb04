// A real client for mcphost's tests (cmd/mcphost TestTSClient): the official MCP TypeScript SDK
// connects over stdio or Streamable HTTP, lists every tool (following
// cursors), calls one, and prints one JSON object with what it saw.
//
//   node client.mjs stdio TOOL ARGS_JSON -- COMMAND [ARGS...]
//   node client.mjs http  TOOL ARGS_JSON URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, tool, argsJSON, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const cmd = rest[0] === "--" ? rest.slice(1) : rest;
  transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error("usage: client.mjs stdio|http TOOL ARGS_JSON (-- COMMAND ARGS... | URL)");
  process.exit(2);
}

const client = new Client({ name: "mcphost-tsclient", version: "1.0.0" });
await client.connect(transport);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
const call = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema })),
  call,
}));
await client.close();
