// mcphost.ts: write mcphost (and hyper-mcp v2) plugins in AssemblyScript,
// on top of the official Extism PDK (@extism/as-pdk).
//
// It adds what the PDK lacks for MCP: the MCP host functions
// (extism:host/user), a JSON string writer, a small JSON reader that finds
// a value by a dotted key path ("request.arguments.text"), and an abort
// handler that reports the message as the call's error. Every export is
// `function f(): i32`: read the input with Host.inputString(), write JSON
// with output() (not the PDK's Host.outputString: see output), return 0.
// The payloads are MCP's own shapes; see abi/README.md in mcphost.
import { Memory } from "@extism/as-pdk";

// ---- MCP host functions (extism:host/user) --------------------------------

// @ts-ignore: decorator
@external("extism:host/user", "notify_logging_message")
declare function notify_logging_message(payload: u64): void;
// @ts-ignore: decorator
@external("extism:host/user", "notify_progress")
declare function notify_progress(payload: u64): void;
// @ts-ignore: decorator
@external("extism:host/user", "notify_tool_list_changed")
export declare function notifyToolListChanged(): void;
// @ts-ignore: decorator
@external("extism:host/env", "error_set")
declare function error_set(offset: u64): void;
// @ts-ignore: decorator
@external("extism:host/env", "output_set")
declare function output_set(offset: u64, length: u64): void;
// @ts-ignore: decorator
@external("extism:host/env", "alloc")
declare function extism_alloc(length: u64): u64;
// @ts-ignore: decorator
@external("extism:host/env", "store_u64")
declare function store_u64(offset: u64, v: u64): void;
// @ts-ignore: decorator
@external("extism:host/env", "store_u8")
declare function store_u8(offset: u64, v: u8): void;
// @ts-ignore: decorator
@external("extism:host/env", "length")
declare function extism_length(offset: u64): u64;
// @ts-ignore: decorator
@external("extism:host/user", "kv")
declare function host_kv(payload: u64): u64;
// @ts-ignore: decorator
@external("extism:host/user", "http")
declare function host_http(payload: u64): u64;

// @ts-ignore: decorator
@external("mcphost:host/call", "cancelled")
declare function host_cancelled(): i32;

// cancelled says whether the client has cancelled the call being served
// (notifications/cancelled, a closed connection). The host then gives the
// call the plugin's cancel_grace (1 s unless set) to return: a plugin that
// returns in time keeps its instance, and its globals; one still running
// after it is stopped and its instance replaced. Ask it in long loops; the
// import is only in plugins that call it.
export function cancelled(): bool {
  return host_cancelled() == 1;
}

// log sends notifications/message to the client at level ("debug", "info",
// "warning", "error", …) with text as its data.
export function log(level: string, text: string): void {
  const m = kernelString('{"level":' + jsonString(level) + ',"data":' + jsonString(text) + "}");
  notify_logging_message(m.offset);
}

// progress sends notifications/progress for the current request (a no-op
// when the client gave no progress token).
export function progress(done: f64, total: f64, message: string): void {
  const m = kernelString(
    '{"progress":' + done.toString() + ',"total":' + total.toString() + ',"message":' + jsonString(message) + "}",
  );
  notify_progress(m.offset);
}

// fail sets the call's error; the export should then return 1.
export function fail(message: string): i32 {
  error_set(kernelString(message).offset);
  return 1;
}

// abort replaces AssemblyScript's default abort (an import the host does
// not provide): the message becomes the call's error, then the call traps.
export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  const where = (file === null ? "?" : file) + ":" + line.toString() + ":" + column.toString();
  error_set(kernelString((message === null ? "abort" : message) + " at " + where).offset);
  unreachable();
}

// textResult returns a CallToolResult holding one text block.
export function textResult(text: string, isError: bool = false): string {
  return '{"content":[{"type":"text","text":' + jsonString(text) + "}]" + (isError ? ',"isError":true}' : "}");
}

// output writes s as the call's output and returns 0, the export's result.
// (The PDK's Host.outputString sets the output's length to s.length, in
// UTF-16 units, which cuts off the end of a non-ASCII output.)
export function output(s: string): i32 {
  const m = kernelString(s);
  output_set(m.offset, m.length);
  return 0;
}

// kernelString copies s, as UTF-8, into a new block of Extism kernel
// memory, 8 bytes a host call: the PDK's Memory.allocateString stores one
// byte a call, which made most of a small tool call's time.
export function kernelString(s: string): Memory {
  const buf = String.UTF8.encode(s);
  const n = buf.byteLength;
  const off = extism_alloc(<u64>n);
  const p = changetype<usize>(buf);
  let i = 0;
  for (; i + 8 <= n; i += 8) store_u64(off + <u64>i, load<u64>(p + <usize>i));
  for (; i < n; i++) store_u8(off + <u64>i, load<u8>(p + <usize>i));
  return new Memory(off, <u64>n);
}

// ---- JSON writing ---------------------------------------------------------

const HEX = "0123456789abcdef";

// jsonString quotes s as a JSON string.
export function jsonString(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    out += s.substring(start, i);
    if (c == 0x22) out += '\\"';
    else if (c == 0x5c) out += "\\\\";
    else if (c == 0x0a) out += "\\n";
    else if (c == 0x0d) out += "\\r";
    else if (c == 0x09) out += "\\t";
    else out += "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
    start = i + 1;
  }
  return out + s.substring(start) + '"';
}

// ---- JSON reading ---------------------------------------------------------

function ws(s: string, i: i32): i32 {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
    i++;
  }
  return i;
}

// skip returns the index just past the value at i, or -1 when the text is
// not valid JSON there. Nesting deeper than 256 levels is refused.
function skip(s: string, i: i32, depth: i32): i32 {
  i = ws(s, i);
  if (i >= s.length || depth > 256) return -1;
  const c = s.charCodeAt(i);
  if (c == 0x22) {
    for (i++; i < s.length; i++) {
      const d = s.charCodeAt(i);
      if (d == 0x5c) i++;
      else if (d == 0x22) return i + 1;
      else if (d < 0x20) return -1;
    }
    return -1;
  }
  if (c == 0x7b || c == 0x5b) {
    const obj = c == 0x7b;
    const close = obj ? 0x7d : 0x5d;
    i = ws(s, i + 1);
    if (i < s.length && s.charCodeAt(i) == close) return i + 1;
    for (;;) {
      if (obj) {
        i = ws(s, i);
        if (i >= s.length || s.charCodeAt(i) != 0x22) return -1;
        i = skip(s, i, depth + 1);
        if (i < 0) return -1;
        i = ws(s, i);
        if (i >= s.length || s.charCodeAt(i) != 0x3a) return -1;
        i++;
      }
      i = skip(s, i, depth + 1);
      if (i < 0) return -1;
      i = ws(s, i);
      if (i >= s.length) return -1;
      const d = s.charCodeAt(i);
      if (d == close) return i + 1;
      if (d != 0x2c) return -1;
      i++;
    }
  }
  const start = i;
  while (i < s.length) {
    const d = s.charCodeAt(i);
    if (!(d == 0x2d || d == 0x2b || d == 0x2e || (d >= 0x30 && d <= 0x39) || (d >= 0x61 && d <= 0x7a) || (d >= 0x41 && d <= 0x5a))) break;
    i++;
  }
  return i > start ? i : -1;
}

// jsonGet returns the raw JSON of the value at path, a dot-separated list
// of object keys ("" is the whole text), or null when there is none. Keys
// are compared as written, without unescaping.
export function jsonGet(json: string, path: string): string | null {
  let i = 0;
  const keys = path.length == 0 ? new Array<string>(0) : path.split(".");
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k];
    i = ws(json, i);
    if (i >= json.length || json.charCodeAt(i) != 0x7b) return null;
    i = ws(json, i + 1);
    let found = false;
    while (i < json.length && json.charCodeAt(i) == 0x22) {
      const kend = skip(json, i, 0);
      if (kend < 0) return null;
      const match = json.substring(i + 1, kend - 1) == key;
      i = ws(json, kend);
      if (i >= json.length || json.charCodeAt(i) != 0x3a) return null;
      i = ws(json, i + 1);
      if (match) {
        found = true;
        break;
      }
      i = skip(json, i, 0);
      if (i < 0) return null;
      i = ws(json, i);
      if (i < json.length && json.charCodeAt(i) == 0x2c) i = ws(json, i + 1);
    }
    if (!found) return null;
  }
  i = ws(json, i);
  const end = skip(json, i, 0);
  return end < 0 ? null : json.substring(i, end);
}

function hex4(s: string, i: i32): i32 {
  let r = 0;
  for (let k = 0; k < 4; k++) {
    const c = s.charCodeAt(i + k);
    let d: i32;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
    else return -1;
    r = (r << 4) | d;
  }
  return r;
}

// jsonGetString decodes the string at path, or returns null when the value
// is absent or not a string.
export function jsonGetString(json: string, path: string): string | null {
  const v = jsonGet(json, path);
  if (v === null) return null;
  const s = v;
  if (s.length < 2 || s.charCodeAt(0) != 0x22) return null;
  let out = "";
  let i = 1;
  const end = s.length - 1;
  while (i < end) {
    let j = i;
    while (j < end && s.charCodeAt(j) != 0x5c) j++;
    out += s.substring(i, j);
    if (j >= end) break;
    if (j + 1 >= end) return null;
    const c = s.charCodeAt(j + 1);
    i = j + 2;
    if (c == 0x22 || c == 0x5c || c == 0x2f) out += String.fromCharCode(c);
    else if (c == 0x62) out += "\b";
    else if (c == 0x66) out += "\f";
    else if (c == 0x6e) out += "\n";
    else if (c == 0x72) out += "\r";
    else if (c == 0x74) out += "\t";
    else if (c == 0x75) {
      if (i + 4 > end) return null;
      const code = hex4(s, i);
      if (code < 0) return null;
      out += String.fromCharCode(code); // surrogate pairs arrive as two escapes and join up
      i += 4;
    } else return null;
  }
  return out;
}

// jsonGetNumber decodes the number at path, or returns NaN.
export function jsonGetNumber(json: string, path: string): f64 {
  const v = jsonGet(json, path);
  if (v === null) return NaN;
  const c = v.charCodeAt(0);
  if (!(c == 0x2d || (c >= 0x30 && c <= 0x39))) return NaN;
  return F64.parseFloat(v);
}

// ---- key-value state ------------------------------------------------------
//
// The plugin's own key-value state, kept by mcphost in its store: shared by
// every replica of the server ([server] store) and outliving restarts.
// Globals stay per instance and per replica. Values here are strings
// (UTF-8). A KVResult that is not ok has an error naming the store (it is
// down, a quota is reached): return it as the tool's error, never as an
// empty value. The kv import is only in plugins that call these.

export class KVResult {
  ok: bool = false;
  error: string = "";
  found: bool = false; // kvGet: whether the key is set
  value: string = ""; // kvGet: its value
  number: i64 = 0; // kvIncrement: the sum
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64(s: string): string {
  const b = Uint8Array.wrap(String.UTF8.encode(s));
  let out = "";
  for (let i = 0; i < b.length; i += 3) {
    const v = (u32(b[i]) << 16) | (i + 1 < b.length ? u32(b[i + 1]) << 8 : 0) | (i + 2 < b.length ? u32(b[i + 2]) : 0);
    out += B64.charAt((v >> 18) & 63) + B64.charAt((v >> 12) & 63);
    out += i + 1 < b.length ? B64.charAt((v >> 6) & 63) : "=";
    out += i + 2 < b.length ? B64.charAt(v & 63) : "=";
  }
  return out;
}

function unbase64(s: string): string {
  const out = new Uint8Array((s.length / 4) * 3);
  let n = 0;
  for (let i = 0; i + 3 < s.length; i += 4) {
    let v: u32 = 0;
    let pad = 0;
    for (let j = 0; j < 4; j++) {
      const c = B64.indexOf(s.charAt(i + j));
      if (c < 0) pad++;
      v = (v << 6) | u32(c < 0 ? 0 : c);
    }
    out[n++] = u8(v >> 16);
    if (pad < 2) out[n++] = u8(v >> 8);
    if (pad < 1) out[n++] = u8(v);
  }
  return String.UTF8.decode(out.slice(0, n).buffer);
}

// replyOf reads and frees the JSON reply of a host function at off; null
// when there is none.
function replyOf(off: u64): string | null {
  if (off == 0) return null;
  const mem = new Memory(off, extism_length(off));
  const reply = mem.toString();
  mem.free();
  return reply;
}

function kvCall(req: string): KVResult {
  const r = new KVResult();
  const got = replyOf(host_kv(kernelString(req).offset));
  if (got === null) {
    r.error = "kv: no reply from the host";
    return r;
  }
  const reply = got as string;
  const err = jsonGetString(reply, "error");
  if (err !== null) {
    r.error = err;
    return r;
  }
  r.ok = true;
  const found = jsonGet(reply, "found");
  r.found = found !== null && found == "true";
  const v = jsonGetString(reply, "value");
  if (v !== null) r.value = unbase64(v);
  const n = jsonGet(reply, "number");
  if (n !== null) r.number = I64.parseInt(n);
  return r;
}

function kvOp(op: string, key: string): string {
  return '{"op":"' + op + '","key":' + jsonString(key);
}

// kvGet reads key: found and value.
export function kvGet(key: string): KVResult {
  return kvCall(kvOp("get", key) + "}");
}

// kvSet sets key to value.
export function kvSet(key: string, value: string): KVResult {
  return kvCall(kvOp("set", key) + ',"value":"' + base64(value) + '"}');
}

// kvDelete removes key (a key that is not set is no error).
export function kvDelete(key: string): KVResult {
  return kvCall(kvOp("delete", key) + "}");
}

// kvIncrement adds delta to the integer at key (absent counts as 0); the
// sum is in number. Atomic across replicas.
export function kvIncrement(key: string, delta: i64): KVResult {
  return kvCall(kvOp("increment", key) + ',"delta":' + delta.toString() + "}");
}

// ---- outbound HTTP ------------------------------------------------------------
// http sends a request through mcphost's http host function, under the
// plugin's allowed_hosts, may_request_hosts and response-size limit
// (use it, not the PDK's Http.request, whose refusals trap the call and
// lose the plugin's globals). headers is "" or a JSON object of strings;
// body is sent when not empty. An HTTPResult that is not ok has an error,
// and refused when the host refused the destination (allowed_hosts does
// not name it, a person denied it, or a person is still to be asked and
// the call ends in an input_required round that runs it again): return
// it as the tool's error; the plugin's globals survive. The http import
// is only in plugins that call this. Bodies are strings (UTF-8).

export class HTTPResult {
  ok: bool = false;
  error: string = "";
  refused: bool = false;
  status: i32 = 0;
  body: string = "";
  headers: string = "{}"; // a JSON object, names lower case
}

export function http(method: string, url: string, headers: string = "", body: string = ""): HTTPResult {
  let req = '{"url":' + jsonString(url) + ',"method":' + jsonString(method);
  if (headers.length > 0) req += ',"headers":' + headers;
  if (body.length > 0) req += ',"body":"' + base64(body) + '"';
  const r = new HTTPResult();
  const got = replyOf(host_http(kernelString(req + "}").offset));
  if (got === null) {
    r.error = "http: no reply from the host";
    return r;
  }
  const reply = got as string;
  const err = jsonGetString(reply, "error");
  if (err !== null) {
    r.error = err;
    const refused = jsonGet(reply, "refused");
    r.refused = refused !== null && refused == "true";
    return r;
  }
  r.ok = true;
  r.status = i32(jsonGetNumber(reply, "status"));
  const b = jsonGetString(reply, "body");
  if (b !== null) r.body = unbase64(b);
  const h = jsonGet(reply, "headers");
  if (h !== null) r.headers = h;
  return r;
}
