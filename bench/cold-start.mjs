// `npm run bench:cold`: a fresh process from its start to the first AgentEnd of a one-turn run (a CLI's or a
// serverless function's life), phi-rx against pi-agent-core's `Agent`, the AI SDK's `streamText` and a bare node
// process (the floor).
//
//   node bench/cold-start.mjs [--samples 15] [--no-build] [--json] [--only floor,phi,pi,ai-sdk]
//
// phi-rx runs from its published bundle (`npm run build`: dist/), the anchors from bench/node_modules. Each
// sample is a new `node` process running bench/cold/<contender>.mjs, which imports the library, streams one
// answer of 10 deltas from a model stub and prints the time since the process started (performance.now())
// when the run has ended, the time its imports took and its CPU time (user + system, all threads). The
// contenders take turns sample by sample, so that a machine whose load changes affects each alike.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const samples = Number(option('--samples', 15));
if (!Number.isInteger(samples) || samples < 3) throw new Error('--samples must be a whole number, at least 3');
const LABELS = { floor: 'floor (node, no library)', phi: 'phi-rx BasicAgent', pi: 'pi-agent-core Agent', 'ai-sdk': 'AI SDK streamText' };
const ids = option('--only')?.split(',') ?? Object.keys(LABELS);
const log = (line) => process.stderr.write(`${line}\n`);

if (!argv.includes('--no-build') && ids.includes('phi')) {
  log('building dist/ (npm run build)...');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
if (ids.some((id) => id === 'pi' || id === 'ai-sdk')) {
  try {
    execFileSync(process.execPath, ['-e', "import('@mariozechner/pi-agent-core')"], { cwd: benchDir, stdio: 'ignore' });
  } catch {
    log('installing the anchors (npm install --prefix bench)...');
    execFileSync('npm', ['install', '--prefix', benchDir, '--no-audit', '--no-fund'], { stdio: ['ignore', 2, 2] });
  }
}

const results = Object.fromEntries(ids.map((id) => [id, []]));
for (let i = 0; i < samples; i++) {
  for (const id of ids) {
    const out = execFileSync(process.execPath, [path.join(benchDir, 'cold', `${id}.mjs`)], { cwd: benchDir, encoding: 'utf8' });
    results[id].push(JSON.parse(out.trim().split('\n').pop()));
  }
  log(`sample ${i + 1}/${samples}`);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const rows = ids.map((id) => {
  const r = results[id];
  return { id, label: LABELS[id], endMs: median(r.map((x) => x.endMs)), minMs: Math.min(...r.map((x) => x.endMs)), maxMs: Math.max(...r.map((x) => x.endMs)), importedMs: median(r.map((x) => x.importedMs)), cpuMs: median(r.map((x) => x.cpuMs)) };
});
if (argv.includes('--json')) {
  console.log(JSON.stringify({ node: process.version, samples, rows }, null, 2));
} else {
  const pi = rows.find((r) => r.id === 'pi');
  const f = (n) => n.toFixed(1);
  console.log(`**Cold start** — a fresh process to the end of a one-turn run (10 deltas); medians of ${samples} processes each, taking turns`);
  console.log('');
  console.log('| contender | to the end of the run, ms (min–max) | of which imports done at, ms | CPU ms | / pi |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.label} | ${f(r.endMs)} (${f(r.minMs)}–${f(r.maxMs)}) | ${f(r.importedMs)} | ${f(r.cpuMs)} | ${pi ? `${(r.endMs / pi.endMs).toFixed(2)}×` : ''} |`);
}
