// A real client for mcphost's tests (cmd/mcphost/internal/systest/clients TestTSClient): an official
// MCP TypeScript SDK client connects over stdio or Streamable HTTP, lists
// every tool (following cursors), calls one, and prints one JSON object with
// what it saw.
//
//   node client.mjs [--sdk 1|2] [--elicit CONTENT_JSON] stdio TOOL ARGS_JSON -- COMMAND [ARGS...]
//   node client.mjs [--sdk 1|2] [--elicit CONTENT_JSON] http  TOOL ARGS_JSON URL
//
// --sdk 1 (the default) is @modelcontextprotocol/sdk 1.x, which speaks up to
// 2025-11-25 (initialize). --sdk 2 is @modelcontextprotocol/client 2.x with
// versionNegotiation mode "auto": it probes with server/discover and speaks
// 2026-07-28 when the server does, falling back to initialize otherwise.
// --elicit declares the elicitation capability and answers every
// elicitation (a server->client request in 2025, an input_required round in
// 2026-07-28) by accepting with CONTENT_JSON; the messages asked are printed.
// Over HTTP the JSON-RPC methods the client POSTed are printed too (with
// whether a request carried inputResponses), so a test can see the wire.
import { loadSDK, negotiatedVersion } from "./sdk.mjs";

let sdk = "1";
let elicit;
const argv = process.argv.slice(2);
while (argv[0]?.startsWith("--") && argv[0] !== "--") {
  const flag = argv.shift();
  if (flag === "--sdk") sdk = argv.shift();
  else if (flag === "--elicit") elicit = JSON.parse(argv.shift());
  else usage(`unknown flag ${flag}`);
}
const [mode, tool, argsJSON, ...rest] = argv;

function usage(why) {
  console.error(`client.mjs: ${why}\nusage: client.mjs [--sdk 1|2] [--elicit CONTENT_JSON] stdio|http TOOL ARGS_JSON (-- COMMAND ARGS... | URL)`);
  process.exit(2);
}

let loaded;
try {
  loaded = await loadSDK(sdk);
} catch (e) {
  usage(e.message);
}
const { Client, StdioClientTransport, StreamableHTTPClientTransport } = loaded;

// sent records the JSON-RPC requests the HTTP transport POSTs.
const sent = [];
async function tapFetch(url, init) {
  if (init?.method === "POST" && typeof init.body === "string") {
    for (const m of [JSON.parse(init.body)].flat()) {
      if (m.method) sent.push({ method: m.method, inputResponses: !!m.params?.inputResponses });
    }
  }
  return fetch(url, init);
}

let transport;
if (mode === "stdio") {
  const cmd = rest[0] === "--" ? rest.slice(1) : rest;
  transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), { fetch: tapFetch });
} else {
  usage(`unknown mode ${mode}`);
}

const options = { ...loaded.options };
if (elicit !== undefined) options.capabilities = { elicitation: {} };
const client = new Client({ name: "mcphost-tsclient", version: "1.0.0" }, options);
const version = negotiatedVersion(sdk, client, transport);
const elicitations = [];
if (elicit !== undefined) {
  const answer = async (request) => {
    elicitations.push(request.params.message);
    return { action: "accept", content: elicit };
  };
  client.setRequestHandler(loaded.elicitation, answer);
}

await client.connect(transport);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
const call = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
console.log(JSON.stringify({
  sdk,
  protocolVersion: version(),
  era: sdk === "1" ? "legacy" : client.getProtocolEra(),
  server: client.getServerVersion(),
  tools: tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema })),
  call,
  elicitations,
  sent: mode === "http" ? sent : undefined,
}));
await client.close();
