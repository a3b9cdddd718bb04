// A person behind a real client, for mcphost's consent tests (cmd/mcphost
// TestConsentTSClient): the official MCP TypeScript SDK connects over stdio
// or Streamable HTTP declaring elicitation, answers each elicitation/create
// with the next scripted decision, makes the scripted tool calls in order,
// and prints one JSON object with the questions it was asked and the calls'
// results.
//
//   node consent-client.mjs [--sdk 1|2] stdio ANSWERS_JSON CALLS_JSON -- COMMAND [ARGS...]
//   node consent-client.mjs [--sdk 1|2] http  ANSWERS_JSON CALLS_JSON URL
//
// --sdk picks the client as client.mjs does (sdk.mjs): 1 speaks 2025-11-25,
// where a question is an elicitation/create request; 2 speaks 2026-07-28,
// where it is an input_required round the client answers by retrying.
//
// ANSWERS_JSON is a list of decisions (allow_once, allow_always, deny) or
// "decline"; CALLS_JSON a list of {"name": TOOL, "arguments": {...}}.
import { loadSDK, negotiatedVersion } from "./sdk.mjs";

const argv = process.argv.slice(2);
let sdk = "1";
if (argv[0] === "--sdk") {
  argv.shift();
  sdk = argv.shift();
}
const [mode, answersJSON, callsJSON, ...rest] = argv;
const loaded = await loadSDK(sdk);
const { Client, StdioClientTransport, StreamableHTTPClientTransport } = loaded;
let transport;
if (mode === "stdio") {
  const cmd = rest[0] === "--" ? rest.slice(1) : rest;
  transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error("usage: consent-client.mjs [--sdk 1|2] stdio|http ANSWERS_JSON CALLS_JSON (-- COMMAND ARGS... | URL)");
  process.exit(2);
}

const answers = JSON.parse(answersJSON);
const asked = [];
const client = new Client({ name: "mcphost-consent-tsclient", version: "1.0.0" },
  { ...loaded.options, capabilities: { elicitation: {} } });
const version = negotiatedVersion(sdk, client, transport);
client.setRequestHandler(loaded.elicitation, async (req) => {
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
console.log(JSON.stringify({ protocolVersion: version(), asked, calls }));
await client.close();
