// A person behind a real client, for mcphost's consent tests (cmd/mcphost
// TestConsentTSClient): the official MCP TypeScript SDK connects over stdio
// or Streamable HTTP declaring elicitation, answers each elicitation/create
// with the next scripted decision, makes the scripted tool calls in order,
// and prints one JSON object with the questions it was asked and the calls'
// results.
//
//   node consent-client.mjs stdio ANSWERS_JSON CALLS_JSON -- COMMAND [ARGS...]
//   node consent-client.mjs http  ANSWERS_JSON CALLS_JSON URL
//
// ANSWERS_JSON is a list of decisions (allow_once, allow_always, deny) or
// "decline"; CALLS_JSON a list of {"name": TOOL, "arguments": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, answersJSON, callsJSON, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  const cmd = rest[0] === "--" ? rest.slice(1) : rest;
  transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error("usage: consent-client.mjs stdio|http ANSWERS_JSON CALLS_JSON (-- COMMAND ARGS... | URL)");
  process.exit(2);
}

const answers = JSON.parse(answersJSON);
const asked = [];
const client = new Client({ name: "mcphost-consent-tsclient", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push({ message: req.params.message, schema: req.params.requestedSchema });
  const answer = answers.shift() ?? "deny";
  if (answer === "decline") {
    return { action: "decline" };
  }
  return { action: "accept", content: { decision: answer } };
});
await client.connect(transport);
const calls = [];
for (const call of JSON.parse(callsJSON)) {
  calls.push(await client.callTool(call));
}
console.log(JSON.stringify({ protocolVersion: transport.protocolVersion ?? null, asked, calls }));
await client.close();
