// Runs the kinds or the net component in Node through `jco transpile` and
// @bytecodealliance/preview2-shim, the reference host, for
// TestComponentDifferential: each stdin line is {"tool":…,"args":{…}},
// each stdout line the result in mcphost's JSON convention,
// {"ok": value} or {"err": value}.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const mod = await import(pathToFileURL(process.argv[2]).href);
const shapes = mod.shapes;
const flagNames = ['read', 'write', 'exec'];
const fromFlags = (o) => flagNames.filter((n) => o[n]);
const toFlags = (a) => Object.fromEntries(flagNames.map((n) => [n, a.includes(n)]));
const toVariant = (v) => { const [tag] = Object.keys(v); return v[tag] === null ? { tag } : { tag, val: v[tag] }; };
const fromVariant = (v) => ({ [v.tag]: v.val === undefined ? null : v.val });
const tools = {
	'greet': (a) => mod.greet(a.name),
	'add': (a) => mod.add(a.a, a.b, a.c, BigInt(a.d), BigInt(a.e)),
	'swap-floats': (a) => mod.swapFloats(a.a, a.b),
	'next-char': (a) => mod.nextChar(a.c, a.b),
	'reverse': (a) => mod.reverse(a.xs),
	'double': (a) => { const r = mod.double(a.o === null ? undefined : a.o); return r === undefined ? null : r; },
	'divide': (a) => mod.divide(a.a, a.b),
	'sum17': (a) => mod.sum17(...Array.from({ length: 17 }, (_, i) => a['a' + (i + 1)])),
	'echo-point': (a) => shapes.echoPoint(a.p),
	'next-color': (a) => shapes.nextColor(a.c),
	'toggle-exec': (a) => fromFlags(shapes.toggleExec(toFlags(a.p))),
	'scale': (a) => fromVariant(shapes.scale(toVariant(a.s))),
	// net: wasi:http through preview2-shim's fetch.
	'get': (a) => mod.get(a.url, a['connect-timeout-ms'], a['first-byte-timeout-ms'], a['between-bytes-timeout-ms']),
};
// JSON with BigInts written as integers.
const json = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `@@${x}@@` : x)).replace(/"@@(-?\d+)@@"/g, '$1');
for await (const line of createInterface({ input: process.stdin })) {
	// Integers beyond 2^53 become strings first, so BigInt gets them exactly.
	const { tool, args } = JSON.parse(line.replace(/(?<=[:,\[]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '"$1"'));
	try {
		console.log(json({ ok: tools[tool](args) }));
	} catch (e) {
		console.log(json({ err: e.payload !== undefined ? e.payload : String(e) }));
	}
}
