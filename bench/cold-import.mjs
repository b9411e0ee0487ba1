// `npm run bench:import`: how long `import 'phi-rx'` (and each subpath) takes in a fresh process.
//
//   node bench/cold-import.mjs [--samples 15] [--no-build] [--json] [--baseline <git-ref>] [--only phi-rx,rxjs]
//
// Builds the package as published (`npm run build`: the esbuild bundle in dist/), then for each entry point starts
// a fresh `node` process per sample that resolves the entry through the package's own `exports`
// (self-reference, as an app's `import 'phi-rx'` would), times `await import(...)` with
// performance.now(), and prints the time. Reported: the median and min/max of the samples, and the
// median CPU time the import took (process.cpuUsage(), user + system, every thread of the process):
// on a machine shared with other work the wall time mostly measures waiting, the CPU time much less.
//
// `--baseline <git-ref>` also builds that commit (git archive into .tmp/cold-import-baseline, with
// this checkout's node_modules) and samples it alternately with the working tree, entry by entry,
// so that before and after share the machine's state: on a loaded machine only such a ratio is
// worth reading.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const samples = Number(option('--samples') ?? 15);
if (!Number.isInteger(samples) || samples < 10) throw new Error('--samples must be a whole number, at least 10');
const baselineRef = option('--baseline');
const log = (line) => process.stderr.write(`${line}\n`);

// rxjs (the peer every phi-rx app has) is measured alone too: the floor under the root. zod, an
// optional peer no entry loads, can be measured with `--only zod`. An entry `X after A+B` imports A
// and B first, untimed, then times `import X`: the root's own code, its packages already loaded.
export const ROOT_DEPS = ['rxjs', '@cfworker/json-schema'];
export const ENTRIES = ['rxjs', 'phi-rx', `phi-rx after ${ROOT_DEPS.join('+')}`, 'phi-rx/testing', 'phi-rx/providers', 'phi-rx/session', 'phi-rx/tools', 'phi-rx/mcp', 'phi-rx/openapi'];
const only = option('--only')?.split(',');
const entries = only ?? ENTRIES;

const build = (cwd) => execFileSync('npm', ['run', '-s', 'build'], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });

if (!argv.includes('--no-build')) {
  log('building dist/ (npm run build)...');
  build(root);
}

/** The baseline commit as a package directory of its own, built, resolving packages from this checkout. */
function prepareBaseline(ref) {
  const dir = path.join(root, '.tmp', 'cold-import-baseline');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`building the baseline ${ref} in ${path.relative(root, dir)}...`);
  const archive = execFileSync('git', ['archive', ref], { cwd: root, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  build(dir);
  if (!existsSync(path.join(dir, 'dist', 'index.js'))) throw new Error(`the baseline ${ref} did not build dist/index.js`);
  return dir;
}

/** `X after A+B` → { specifier: X, before: [A, B] }. */
const parseEntry = (entry) => {
  const [specifier, after] = entry.split(' after ');
  return { specifier, before: after ? after.split('+') : [] };
};

/** One fresh process in `cwd`: the wall and CPU ms `await import(entry)` took. */
function sample(entry, cwd) {
  const { specifier, before } = parseEntry(entry);
  const code = `${before.map((b) => `await import(${JSON.stringify(b)});`).join(' ')} const c = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(specifier)}); const wall = performance.now() - t; const cpu = process.cpuUsage(c); process.stdout.write(wall + ' ' + (cpu.user + cpu.system) / 1000);`;
  const [wall, cpu] = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd, encoding: 'utf8' }).split(' ').map(Number);
  return { wall, cpu };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const summary = (times) => {
  const wall = times.map((t) => t.wall);
  return { median: median(wall), min: Math.min(...wall), max: Math.max(...wall), cpuMedian: median(times.map((t) => t.cpu)) };
};

const baselineDir = baselineRef ? prepareBaseline(baselineRef) : undefined;
const isOwn = (entry) => /^phi-rx(\/| |$)/.test(entry);
const label = (entry) => {
  const { specifier, before } = parseEntry(entry);
  return `\`import '${specifier}'\`${before.length ? ` after ${before.join(', ')}` : ''}`;
};

const rows = entries.map((entry) => {
  const sides = baselineDir && isOwn(entry) ? [root, baselineDir] : [root];
  for (const cwd of sides) sample(entry, cwd); // the first run warms the OS file cache; not counted
  const times = sides.map(() => []);
  for (let i = 0; i < samples; i++) sides.forEach((cwd, s) => times[s].push(sample(entry, cwd)));
  const row = { entry, ...summary(times[0]), samples };
  if (times[1]) row.baseline = { ref: baselineRef, ...summary(times[1]) };
  return row;
});

const ms = (x) => x.toFixed(1);
if (argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify({ node: process.version, rows }, null, 2)}\n`);
} else if (baselineDir) {
  process.stdout.write(`Cold import, Node ${process.version}, ${samples} fresh processes each, alternating with ${baselineRef} (ms)\n\n`);
  process.stdout.write(`| entry | ${baselineRef} median | now median | now / ${baselineRef} | now min–max | CPU ${baselineRef} | CPU now |\n|---|---:|---:|---:|---:|---:|---:|\n`);
  for (const r of rows) {
    const before = r.baseline ? ms(r.baseline.median) : '';
    const ratio = r.baseline ? `${(r.median / r.baseline.median).toFixed(2)}×` : '';
    const cpuBefore = r.baseline ? ms(r.baseline.cpuMedian) : '';
    process.stdout.write(`| ${label(r.entry)} | ${before} | ${ms(r.median)} | ${ratio} | ${ms(r.min)}–${ms(r.max)} | ${cpuBefore} | ${ms(r.cpuMedian)} |\n`);
  }
} else {
  process.stdout.write(`Cold import, Node ${process.version}, ${samples} fresh processes each (ms)\n\n`);
  process.stdout.write('| entry | median | min | max | CPU median |\n|---|---:|---:|---:|---:|\n');
  for (const r of rows) process.stdout.write(`| ${label(r.entry)} | ${ms(r.median)} | ${ms(r.min)} | ${ms(r.max)} | ${ms(r.cpuMedian)} |\n`);
}
