// `npm run bench:gc`: what a contender's runs cost the garbage collector, counted rather than timed. On a shared
// 2-core machine wall-clock ratios drift by ±10 % between processes; the bytes that outlive the young generation do
// not (they depend on the workload and the code, not on the machine's load), and at `wide` they are most of what
// separates phi-rx from the floor: every object that lives across a scavenge is copied, and promoted ones are
// marked again by the next full GC.
//
//   node bench/gc.mjs [--contender phi-agent-loop,phi-basic-agent,floor] [--preset wide|long] [--runs 8]
//                     [--bundle .tmp/bench/phi-rx.mjs] [--sites N]
//
// Each contender runs in its own process under `--trace-gc-nvp` (V8's one line per collection, with the bytes
// promoted and copied): warm-up runs, then `--runs` runs whose collections are summed and divided by the runs.
// `--sites N` also prints the N allocation sites whose objects outlived the young generation most (V8's sampling
// heap profiler, told to drop what minor GCs collected), per agent-run.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { PRESETS, assertCounts } from './workload.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const contenders = option('--contender', 'floor,phi-agent-loop,phi-basic-agent').split(',');
const preset = option('--preset', 'wide');
const runs = Number(option('--runs', '8'));
const sites = Number(option('--sites', '0'));
const bundle = option('--bundle', '.tmp/bench/phi-rx.mjs');
if (!PRESETS[preset]) throw new Error(`bench/gc.mjs: --preset must be one of ${Object.keys(PRESETS).join(', ')}`);
if (!Number.isInteger(runs) || runs < 1) throw new Error('bench/gc.mjs: --runs must be a whole number, at least 1');
if (!Number.isInteger(sites) || sites < 0) throw new Error('bench/gc.mjs: --sites must be a whole number');
if (!existsSync(bundle)) throw new Error(`bench/gc.mjs: no bundle at ${bundle}: \`npm run bench\` builds .tmp/bench/phi-rx.mjs (or give --bundle)`);
const workload = PRESETS[preset];
const MARK = 'bench-gc: measured runs begin';

if (argv.includes('--child')) {
  // The bundle is read by phi-common.mjs from PHI_RX_BUNDLE (set by the parent).
  const contender = await import(`./contenders/${option('--child')}.mjs`);
  const run = () => contender.run(workload);
  const warm = workload.agents > 1 ? 3 : 30;
  for (let i = 0; i < warm; i++) assertCounts(contender.label, workload, await run());
  let session;
  if (sites > 0) {
    const { Session } = await import('node:inspector/promises');
    session = new Session();
    session.connect();
    await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
  }
  console.log(MARK);
  for (let i = 0; i < runs; i++) assertCounts(contender.label, workload, await run());
  if (session) {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    const bySite = new Map();
    const walk = (node) => {
      const { functionName, url, lineNumber } = node.callFrame;
      const site = `${functionName || '(anonymous)'} ${url.split('/').pop()}:${lineNumber + 1}`;
      if (node.selfSize > 0) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    console.log(`bench-gc sites ${JSON.stringify([...bySite].sort((a, b) => b[1] - a[1]).slice(0, sites))}`);
  }
} else {
  const perRun = (x) => x / runs;
  const mb = (bytes) => (bytes / 1e6).toFixed(1);
  console.log(`${preset}: ${runs} runs per contender after warm-up; bundle ${bundle}; per run:`);
  console.log('| contender | scavenges | survived MB | promoted MB | scavenge pause ms | full GCs | full GC pause ms |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  const siteLists = [];
  for (const name of contenders) {
    const out = execFileSync(process.execPath, ['--trace-gc-nvp', fileURLToPath(import.meta.url), ...argv, '--child', name], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, PHI_RX_BUNDLE: path.resolve(bundle) },
    });
    const lines = out.split('\n');
    const measured = lines.slice(lines.indexOf(MARK) + 1);
    const sum = { scavenges: 0, survived: 0, promoted: 0, scavengePause: 0, full: 0, fullPause: 0 };
    for (const line of measured) {
      const fields = Object.fromEntries([...line.matchAll(/(\w[\w.]*)=([\w.%-]+)/g)].map((m) => [m[1], m[2]]));
      if (fields.gc === 's') {
        sum.scavenges++;
        sum.survived += Number(fields.new_space_survived ?? 0);
        sum.promoted += Number(fields.promoted ?? 0);
        sum.scavengePause += Number(fields.pause ?? 0);
      } else if (fields.gc === 'ms' || fields.gc === 'mc') {
        sum.full++;
        sum.fullPause += Number(fields.pause ?? 0);
      }
    }
    console.log(
      `| ${name} | ${perRun(sum.scavenges).toFixed(1)} | ${mb(perRun(sum.survived))} | ${mb(perRun(sum.promoted))} | ${perRun(sum.scavengePause).toFixed(0)} | ${perRun(sum.full).toFixed(1)} | ${perRun(sum.fullPause).toFixed(0)} |`,
    );
    const siteLine = measured.find((l) => l.startsWith('bench-gc sites '));
    if (siteLine) siteLists.push([name, JSON.parse(siteLine.slice('bench-gc sites '.length))]);
  }
  for (const [name, list] of siteLists) {
    console.log(`\n${name}: bytes that outlived the young generation, per agent-run, by allocation site`);
    for (const [site, bytes] of list) console.log(`${String(Math.round(bytes / runs / workload.agents)).padStart(8)}  ${site}`);
  }
}
