// An AssemblyScript plugin keeping a counter in a global (its instance's
// state) and fetching URLs with mcphost.ts's http: cmd/mcphost's
// TestASKitHTTPRefusal builds it in place of the template's index.ts; its
// refused fetch must come back as an error the plugin returns while its
// counter counts on.
import { Host } from "@extism/as-pdk";
import { http, jsonGetString, output, textResult } from "./mcphost";

export function mcphost_abi_version(): i32 {
  return 2;
}

export function list_tools(): i32 {
  return output(
    '{"tools":[{"name":"count","description":"Adds one to the counter.","inputSchema":{"type":"object"}},' +
      '{"name":"fetch","description":"GETs a URL.",' +
      '"inputSchema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}]}',
  );
}

let count = 0;

export function call_tool(): i32 {
  const input = Host.inputString();
  const name = jsonGetString(input, "request.name");
  if (name !== null && name == "count") {
    count++;
    return output(textResult(count.toString()));
  }
  if (name !== null && name == "fetch") {
    const url = jsonGetString(input, "request.arguments.url");
    if (url === null) return output(textResult('fetch: want {"url": "…"}', true));
    const r = http("GET", url, '{"accept":"text/plain"}');
    if (!r.ok) return output(textResult("fetch: " + r.error + " (refused: " + (r.refused ? "true" : "false") + ")", true));
    return output(textResult(r.status.toString() + " " + r.body));
  }
  return output(textResult("unknown tool", true));
}
