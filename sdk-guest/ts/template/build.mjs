// Builds the plugin into the component OUT (npm run build):
//   1. wit/ → types/, the world as TypeScript declarations (jco), with
//      types/interfaces/ for each interface it imports (WIT in wit/deps/);
//   2. src/ → build/, type-checked against them (tsc);
//   3. build/index.js → a component (componentize-js: StarlingMonkey, the
//      JavaScript engine, with the bindings and a snapshot of the module);
//   4. the WIT's `///` comments → the component's package-docs section,
//      which mcphost reads as the tools' descriptions.
// The component is written to OUT.tmp and renamed, so a watcher never
// loads half a file. Usage: node build.mjs OUT
import { _setPreopens } from '@bytecodealliance/preview2-shim/filesystem';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

// jco and componentize-js read the WIT through preview2-shim's filesystem,
// which starts with no preopened directory (they fail with "os error 44"
// or NotFound): give it the root before loading them.
_setPreopens({ '/': '/' });
const { types } = await import('@bytecodealliance/jco');
const { componentize } = await import('@bytecodealliance/componentize-js');

const out = process.argv[2];
if (!out) fail('usage: node build.mjs OUT.wasm');
const wit = resolve('wit');
let last = performance.now();
const step = (what) => {
  const now = performance.now();
  console.error(`build: ${what} (${((now - last) / 1000).toFixed(1)}s)`);
  last = now;
};

try {
  const files = await types(wit, { guest: true, outDir: 'types' });
  for (const [name, data] of Object.entries(files)) {
    // An imported interface's declarations go to types/interfaces/.
    await mkdir(dirname(name), { recursive: true });
    const old = await readFile(name).catch(() => null);
    if (!old?.equals(Buffer.from(data))) await writeFile(name, data);
  }
  step('types/ from wit/');

  const tsc = spawnSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { stdio: 'inherit' });
  if (tsc.status !== 0) fail(`tsc failed (exit ${tsc.status ?? tsc.signal})`);
  step('tsc');

  const { component } = await componentize({
    sourcePath: resolve('build/index.js'),
    witPath: wit,
    // fetch-event is the incoming-HTTP server of a JS worker; tools serve
    // no HTTP. fetch() (outgoing, feature http) stays.
    disableFeatures: ['fetch-event'],
  });
  step('componentize-js');

  const docs = witDocs(await readWit(wit));
  const bin = Buffer.concat([component, customSection('package-docs', Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(docs))]))]);
  await writeFile(out + '.tmp', bin);
  await rename(out + '.tmp', out);
  step(`wrote ${out}, ${(bin.length / 1e6).toFixed(1)} MB`);
} catch (e) {
  fail(e?.message ?? String(e));
}

function fail(msg) {
  console.error(`build: ${msg}`);
  process.exit(1);
}

async function readWit(dir) {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.wit')).sort();
  return (await Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')))).join('\n');
}

// witDocs collects the `///` comments of worlds, interfaces and their
// functions, in the shape wit-parser writes them (PackageDocs, section
// version 1). componentize-js does not write this section itself.
function witDocs(src) {
  const docs = { worlds: {}, interfaces: {} };
  let doc = [];
  let block = null;
  let depth = 0;
  for (const raw of src.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('///')) {
      doc.push(line.slice(3).trim());
      continue;
    }
    const text = doc.join('\n');
    doc = [];
    let m;
    if (depth === 0 && (m = line.match(/^(world|interface)\s+%?([\w-]+)/))) {
      block = m[1] === 'world' ? { docs: text, funcs: {}, func_exports: {} } : { docs: text, funcs: {} };
      (m[1] === 'world' ? docs.worlds : docs.interfaces)[m[2]] = block;
    } else if (depth === 1 && block && text && (m = line.match(/^(export\s+|import\s+)?%?([\w-]+)\s*:\s*(async\s+)?func\b/))) {
      (m[1]?.trim() === 'export' ? block.func_exports : block.funcs)[m[2]] = text;
    }
    depth += (line.match(/{/g) ?? []).length - (line.match(/}/g) ?? []).length;
  }
  return docs;
}

function customSection(name, payload) {
  const n = Buffer.from(name);
  const body = Buffer.concat([leb128(n.length), n, payload]);
  return Buffer.concat([Buffer.from([0]), leb128(body.length), body]);
}

function leb128(v) {
  const b = [];
  do {
    let x = v & 0x7f;
    v >>>= 7;
    if (v) x |= 0x80;
    b.push(x);
  } while (v);
  return Buffer.from(b);
}
