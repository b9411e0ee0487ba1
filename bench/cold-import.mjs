// `npm run bench:import`: how long `import 'phi-rx'` (and each subpath) takes in a fresh process.
//
//   node bench/cold-import.mjs [--samples 15] [--no-build] [--json]
//
// Builds the package as published (`npm run build`, tsc to dist/), then for each entry point starts
// a fresh `node` process per sample that resolves the entry through the package's own `exports`
// (self-reference, as an app's `import 'phi-rx'` would), times `await import(...)` with
// performance.now(), and prints the time. Reported: the median and min/max of the samples.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const samples = Number(argv[argv.indexOf('--samples') + 1] || 0) || 15;
if (samples < 10) throw new Error('--samples must be at least 10');
const log = (line) => process.stderr.write(`${line}\n`);

// rxjs and zod (the peers every phi-rx app has) are measured alone too: the floor under the root.
export const ENTRIES = ['rxjs', 'zod', 'phi-rx', 'phi-rx/testing', 'phi-rx/providers', 'phi-rx/session', 'phi-rx/tools', 'phi-rx/mcp', 'phi-rx/openapi'];

if (!argv.includes('--no-build')) {
  log('building dist/ (npm run build)...');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** One fresh process: the ms `await import(entry)` took. */
function sample(entry) {
  const code = `const t = performance.now(); await import(${JSON.stringify(entry)}); process.stdout.write(String(performance.now() - t));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
  return Number(out);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = ENTRIES.map((entry) => {
  sample(entry); // first run warms the OS file cache; not counted
  const times = Array.from({ length: samples }, () => sample(entry));
  return { entry, median: median(times), min: Math.min(...times), max: Math.max(...times), samples };
});

if (argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify({ node: process.version, rows }, null, 2)}\n`);
} else {
  process.stdout.write(`Cold import, Node ${process.version}, ${samples} fresh processes each (ms)\n\n`);
  process.stdout.write('| entry | median | min | max |\n|---|---:|---:|---:|\n');
  for (const r of rows) process.stdout.write(`| \`import '${r.entry}'\` | ${r.median.toFixed(1)} | ${r.min.toFixed(1)} | ${r.max.toFixed(1)} |\n`);
}
