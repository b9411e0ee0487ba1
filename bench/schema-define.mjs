// `npm run bench:schema`: what `defineTool` costs for a schema seen before, made anew (a tool defined inside a
// request handler), against the first time that schema is seen (converted and compiled).
//
//   node bench/schema-define.mjs [--n 5000]
//
// Over the bundle `npm run bench` builds (.tmp/bench/phi-rx.mjs; built first when absent). The schemas are made
// before the timing (what a user's own `z.object(...)` costs is not phi-rx's); each timed call gets a schema object
// it has not seen, equal to one it has. "First seen" uses schemas that differ in a description, so none is cached.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const bundle = path.join(benchDir, '..', '.tmp', 'bench', 'phi-rx.mjs');
if (!existsSync(bundle)) execFileSync(process.execPath, [path.join(benchDir, 'run.mjs'), '--build-only'], { stdio: ['ignore', 2, 2] });
const { defineTool, z } = await import(pathToFileURL(bundle).href);
const argv = process.argv.slice(2);
const n = Number(argv.includes('--n') ? argv[argv.indexOf('--n') + 1] : 5000);

const zodSchema = (d) => z.object({ path: z.string().describe(d), line: z.number().int().min(0) });
const jsonSchema = (d) => ({ type: 'object', properties: { path: { type: 'string', description: d }, line: { type: 'integer', minimum: 0 } }, required: ['path'] });
const define = (parameters) => defineTool({ name: 'lookup', description: 'Looks a line up in a file.', parameters, execute: () => 'ok' });

function perCall(make, distinct) {
  const warm = Array.from({ length: 3000 }, (_, i) => make(distinct ? `warm ${i}` : 'the file'));
  for (const s of warm) define(s);
  const schemas = Array.from({ length: n }, (_, i) => make(distinct ? `file ${i} ${Math.random()}` : 'the file'));
  const start = process.hrtime.bigint();
  for (const s of schemas) define(s);
  return Number(process.hrtime.bigint() - start) / n / 1000;
}

const rows = [
  ['zod 4, an equal schema seen before', perCall(zodSchema, false)],
  ['zod 4, first seen (converted, compiled)', perCall(zodSchema, true)],
  ['JSON Schema, an equal schema seen before', perCall(jsonSchema, false)],
  ['JSON Schema, first seen (compiled)', perCall(jsonSchema, true)],
];
console.log(`**defineTool per call** — ${n} calls each, schemas made before the timing; Node ${process.version}`);
console.log('');
console.log('| schema | µs per defineTool |');
console.log('|---|---:|');
for (const [label, us] of rows) console.log(`| ${label} | ${us.toFixed(2)} |`);
