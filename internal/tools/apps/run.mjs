// Drives mcphost's MCP Apps browser test (cmd/mcphost/internal/systest/clients TestAppsBrowser):
// bundles host.mjs with esbuild, serves it on loopback, opens it in
// headless Chromium (Debian's, through playwright-core), waits for the app
// to show the tool's result, presses the app's button (which calls
// another tool through the AppBridge), reads what the app shows, takes a
// screenshot and prints one JSON object with everything it saw.
//
//   node run.mjs --mcp URL --tool NAME --args JSON --click-tool NAME --screenshot PNG [--era 2025-11-25|2026-07-28]
//
// MCPHOST_CHROMIUM names the browser (default /usr/bin/chromium).
import http from "node:http";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";

const opts = {};
for (let a = process.argv.slice(2); a.length; ) {
  const k = a.shift();
  if (!k.startsWith("--") || !a.length) usage(`bad argument ${k}`);
  opts[k.slice(2)] = a.shift();
}
for (const k of ["mcp", "tool", "args", "click-tool", "screenshot"]) if (!opts[k]) usage(`missing --${k}`);
function usage(why) {
  console.error(`run.mjs: ${why}`);
  process.exit(2);
}

const bundle = await build({
  entryPoints: [fileURLToPath(new URL("./host.mjs", import.meta.url))],
  bundle: true, write: false, format: "esm", platform: "browser", target: "chrome120", logLevel: "error",
});
const js = bundle.outputFiles[0].text;
const html = `<!doctype html><meta charset="utf-8"><title>mcphost MCP Apps host</title>
<body style="font: 14px system-ui; margin: 16px"><h2>mcphost · MCP App of ${opts.tool}</h2><div id="apps"></div>
<script type="module" src="/host.js"></script></body>`;
const server = http.createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  else if (path === "/host.js") res.writeHead(200, { "content-type": "text/javascript" }).end(js);
  else if (path === "/favicon.ico") res.writeHead(204).end();
  else res.writeHead(404).end();
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const pageURL = new URL(`http://127.0.0.1:${server.address().port}/`);
pageURL.searchParams.set("mcp", opts.mcp);
pageURL.searchParams.set("tool", opts.tool);
pageURL.searchParams.set("args", opts.args);
pageURL.searchParams.set("era", opts.era ?? "2025-11-25");

const browser = await chromium.launch({
  executablePath: process.env.MCPHOST_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const out = { console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 720, height: 420 } });
  page.on("console", (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(pageURL.href);
  await page.waitForFunction(() => window.report?.ready || window.report?.error, null, { timeout: 60_000 });
  out.report = await page.evaluate(() => window.report);
  if (out.report.error) throw new Error(out.report.error);
  const app = page.frameLocator("#app");
  await app.locator("#status", { hasText: "palette shown" }).waitFor({ timeout: 30_000 });
  out.swatches = await app.locator(".swatch").allTextContents();
  await app.locator("#mix").click();
  await app.locator("#status", { hasText: /^(mixed by|mix failed)/ }).waitFor({ timeout: 30_000 });
  out.status = await app.locator("#status").textContent();
  out.mixed = await app.locator("#mixed").textContent();
  const s = out.swatches;
  out.direct = await page.evaluate(([t, a]) => window.callTool(t, a), [opts["click-tool"], { a: s[0], b: s[s.length - 1] }]);
  await page.screenshot({ path: opts.screenshot, fullPage: true });
  out.screenshot = opts.screenshot;
} catch (e) {
  out.error = String(e?.stack || e);
} finally {
  await browser.close();
  server.close();
}
console.log(JSON.stringify(out));
