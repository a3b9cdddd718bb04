// An AssemblyScript plugin keeping a counter in its key-value state
// (kvIncrement) and a value (kvSet, kvGet): cmd/mcphost's TestASKitKV
// builds it in place of the template's index.ts and serves it on two
// replicas sharing a store.
import { Host } from "@extism/as-pdk";
import { jsonGetString, kvGet, kvIncrement, kvSet, output, textResult } from "./mcphost";

export function mcphost_abi_version(): i32 {
  return 1;
}

export function list_tools(): i32 {
  return output(
    '{"tools":[{"name":"count","description":"Adds one to the counter.","inputSchema":{"type":"object"}},' +
      '{"name":"echo","description":"Stores text, then reads it back.",' +
      '"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}',
  );
}

export function call_tool(): i32 {
  const input = Host.inputString();
  const name = jsonGetString(input, "request.name");
  if (name !== null && name == "count") {
    const r = kvIncrement("count", 1);
    return output(r.ok ? textResult(r.number.toString()) : textResult(r.error, true));
  }
  if (name !== null && name == "echo") {
    const text = jsonGetString(input, "request.arguments.text");
    if (text === null) return output(textResult('echo: want {"text": "…"}', true));
    const set = kvSet("echo", text);
    if (!set.ok) return output(textResult(set.error, true));
    const got = kvGet("echo");
    if (!got.ok) return output(textResult(got.error, true));
    return output(textResult(got.found ? got.value : "(not found)", !got.found));
  }
  return output(textResult("unknown tool", true));
}
