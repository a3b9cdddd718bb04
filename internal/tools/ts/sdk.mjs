// The two official MCP TypeScript clients, loaded by name for the drivers
// beside this file (client.mjs, consent-client.mjs):
//   "1": @modelcontextprotocol/sdk 1.x, which speaks up to 2025-11-25;
//   "2": @modelcontextprotocol/client 2.x, with versionNegotiation "auto":
//        it probes with server/discover and speaks 2026-07-28 when the
//        server does.
// The returned elicitation key is what setRequestHandler takes for
// elicitation/create in that client (in 2026-07-28 the 2.x client answers
// input_required rounds through the same handler).
export async function loadSDK(sdk) {
  if (sdk === "1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, elicitation: ElicitRequestSchema, options: {} };
  }
  if (sdk === "2") {
    const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    return { Client, StdioClientTransport, StreamableHTTPClientTransport, elicitation: "elicitation/create",
      options: { versionNegotiation: { mode: "auto" } } };
  }
  throw new Error(`--sdk ${sdk}: want 1 or 2`);
}

// negotiatedVersion returns a function that reports the protocol version
// client speaks over transport. The 1.x client has no accessor for it, so
// for "1" the initialize result is read as it arrives (call this before
// connect).
export function negotiatedVersion(sdk, client, transport) {
  if (sdk !== "1") return () => client.getNegotiatedProtocolVersion();
  let version;
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const handle = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      version ??= msg?.result?.protocolVersion;
      handle?.(msg, extra);
    };
    return start();
  };
  return () => version;
}
