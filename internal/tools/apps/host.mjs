// A minimal MCP Apps host for mcphost's browser test, bundled by run.mjs
// with esbuild and loaded in headless Chromium. It is built only from the
// official SDKs: @modelcontextprotocol/client talks to mcphost over
// Streamable HTTP, and @modelcontextprotocol/ext-apps's AppBridge talks to
// the app in a sandboxed iframe (SEP-1865).
//
// Query parameters: mcp (mcphost's URL), era ("2026-07-28" negotiates
// with server/discover; anything else initializes), tool and args (the
// tool to call, whose page is shown). What it saw goes to window.report;
// window.report.ready turns true once the app has the tool's result, and
// window.report.error holds a failure.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE, buildAllowAttribute, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";

const q = new URLSearchParams(location.search);
const report = (window.report = { ready: false });

// cspOf turns a resource's _meta.ui.csp into the policy the page runs
// under: inline script and style, and no other origin than those listed.
function cspOf(csp = {}) {
  const list = (a, none = " 'none'") => (a?.length ? " " + a.join(" ") : none);
  return [
    "default-src 'none'",
    "script-src 'unsafe-inline'" + list(csp.resourceDomains, ""),
    "style-src 'unsafe-inline'" + list(csp.resourceDomains, ""),
    "img-src data:" + list(csp.resourceDomains, ""),
    "font-src" + list(csp.resourceDomains),
    "media-src" + list(csp.resourceDomains),
    "connect-src" + list(csp.connectDomains),
    "frame-src" + list(csp.frameDomains),
    "base-uri" + list(csp.baseUriDomains),
  ].join("; ");
}

function withCSP(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', "&quot;")}">`;
  const i = html.search(/<head[^>]*>/i);
  if (i < 0) return meta + html;
  const end = html.indexOf(">", i) + 1;
  return html.slice(0, end) + meta + html.slice(end);
}

async function main() {
  const options = { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } };
  if (q.get("era") === "2026-07-28") options.versionNegotiation = { mode: "auto" };
  const client = new Client({ name: "mcphost-apps-browser", version: "1.0.0" }, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(q.get("mcp"))));
  report.protocolVersion = client.getNegotiatedProtocolVersion?.();
  report.serverExtensions = client.getServerCapabilities()?.extensions ?? null;

  const name = q.get("tool");
  const args = JSON.parse(q.get("args") || "{}");
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name)}`);
  const uri = getToolUiResourceUri(tool);
  report.resourceUri = uri ?? null;
  if (!uri) throw new Error(`tool ${name} names no UI`);
  const { resources } = await client.listResources();
  report.listed = resources.find((r) => r.uri === uri) ?? null;
  const read = await client.readResource({ uri });
  const content = read.contents.find((c) => c.uri === uri);
  report.mimeType = content.mimeType;
  report.csp = content._meta?.ui?.csp ?? null;
  const result = await client.callTool({ name, arguments: args });
  report.toolResult = result.structuredContent ?? null;

  const iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.setAttribute("sandbox", "allow-scripts"); // no allow-same-origin: an opaque origin
  const allow = buildAllowAttribute(content._meta?.ui?.permissions);
  if (allow) iframe.setAttribute("allow", allow);
  report.policy = cspOf(report.csp ?? (report.listed?._meta?.ui?.csp || {}));
  iframe.srcdoc = withCSP(content.text, report.policy);
  iframe.style.cssText = "width: 100%; border: 1px solid #ccc; height: 240px";
  report.sandbox = iframe.getAttribute("sandbox");

  const bridge = new AppBridge(client, { name: "mcphost apps-browser host", version: "1.0.0" },
    { serverTools: {}, logging: {} },
    { hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline" } });
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = `${height + 2}px`; };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  document.getElementById("apps").append(iframe);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await initialized;
  report.appInfo = bridge.getAppVersion?.() ?? null;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  // For the test to compare with what the app shows: a call made here,
  // by the host, without the app.
  window.callTool = async (tool, a) => (await client.callTool({ name: tool, arguments: a })).structuredContent;
  report.ready = true;
}

main().catch((e) => {
  report.error = String(e?.stack || e);
  document.getElementById("apps").textContent = "host failed: " + e;
});
