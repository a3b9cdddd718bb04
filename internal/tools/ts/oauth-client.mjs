// The official MCP TypeScript SDK client with its own OAuth support, as
// mcphost's OAuth end-to-end test drives it (host/streamable/auth_test.go):
//
//   node oauth-client.mjs URL CLIENT_ID CLIENT_SECRET ISSUER SCOPE TOOL ARGS_JSON
//
// It connects without a token, so the SDK has to follow the 401's
// resource_metadata to the authorization server, get a client-credentials
// token for the resource and retry; then it lists the tools and calls one.
// It prints one JSON line: {"tools":[names…],"result":<CallToolResult>}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";

const [url, clientId, clientSecret, issuer, scope, tool, args] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: "ts-oauth-judge", version: "1" });
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
  console.log(JSON.stringify({ tools: tools.map((t) => t.name), result }));
  await client.close();
} catch (err) {
  console.error(`ts client: ${err?.stack ?? err}`);
  process.exit(1);
}
