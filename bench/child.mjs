// One contender in its own process: warm-up runs (at least one, and at least `warmupMs` of them),
// then measured runs, each asserted to have done the whole workload. Prints one JSON line: the run
// times, the counts, the peak RSS.
//
//   node [--expose-gc] bench/child.mjs <contender> '<workload json>' <warmups> <runs> [warmupMs] [steady|forced] [rewarmMs]
//
// Two protocols: `steady` (no forced GC: runs pay for their own garbage, as in a long-lived server)
// and `forced` (needs --expose-gc): before each timed run a full gc(), then untimed re-warm runs
// (at least one and at least `rewarmMs` of CPU time), then a minor gc(), so that the timed run starts with no
// earlier run's garbage, young or old, and with the JIT state a server has between two major GCs.
// Why the re-warm: a full GC deoptimizes every optimized function whose code embeds an object that
// died (V8: "marking dependent code for deoptimization, reason: weak objects"); a loop that creates
// closures and objects per run then runs ~15 runs (~150 ms) in the interpreter and baseline tiers
// while it re-optimizes. Timing the run right after gc() charged that to every run (10-20× the floor
// for phi-rx and pi-agent-core alike; the floor's few functions are barely hit); the first run after
// each full GC is still timed and reported (`afterGcTimes`), so the effect stays visible.
import { performance } from 'node:perf_hooks';
import { assertCounts } from './workload.mjs';

const [name, workloadJson, warmupArg, runsArg, warmupMsArg] = process.argv.slice(2);
const workload = JSON.parse(workloadJson);
const warmups = Number(warmupArg);
const runs = Number(runsArg);
const warmupMs = Number(warmupMsArg ?? 0);
const gcMode = process.argv[7] ?? 'steady';
const rewarmMs = Number(process.argv[8] ?? 500);
if (gcMode === 'forced' && typeof globalThis.gc !== 'function') throw new Error('bench child: forced GC needs node --expose-gc');

const contender = await import(`./contenders/${name}.mjs`);
const baselineRss = process.memoryUsage().rss;

// The first run in a fresh process gives the footprint of one run of the workload (peak RSS so
// far); the peak over all runs is reported too (the steady state of a process that keeps going).
assertCounts(contender.label, workload, await contender.run(workload));
const firstRunPeakRss = process.resourceUsage().maxRSS * 1024;
// Warm-up is counted in runs and in time: the JIT reaches a loop's steady state after a number of
// calls, not of runs (a few-millisecond run needs many more runs than a slow one). The time is the
// process's own CPU time, not wall-clock time: on a machine shared with other work a process that
// waits for a core still gets the same amount of warm-up (a wall-clock second gave phi-rx 29 runs
// at load 12 on 2 cores, against ~150 on an idle machine, and left it half-optimized).
const warmStart = cpuMs();
let warmupRuns = 1;
for (; warmupRuns < warmups || cpuMs() - warmStart < warmupMs; warmupRuns++) {
  assertCounts(contender.label, workload, await contender.run(workload));
}

const times = [];
const cpuTimes = [];
const afterGcTimes = [];
let counts;
for (let i = 0; i < runs; i++) {
  if (gcMode === 'forced') await afterFullGc();
  const cpu = process.cpuUsage();
  const start = performance.now();
  counts = await contender.run(workload);
  times.push(performance.now() - start);
  const used = process.cpuUsage(cpu);
  cpuTimes.push((used.user + used.system) / 1000);
  assertCounts(contender.label, workload, counts);
}

process.stdout.write(
  `${JSON.stringify({
    contender: name,
    gc: gcMode,
    label: contender.label,
    workload,
    warmupRuns,
    times,
    cpuTimes,
    afterGcTimes,
    counts,
    baselineRssBytes: baselineRss,
    firstRunPeakRssBytes: firstRunPeakRss,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  })}\n`,
);

/**
 * The forced protocol's preparation of one timed run: a full GC, re-warm runs (the first one timed
 * into `afterGcTimes`), then a minor GC that drops the re-warm runs' young garbage.
 */
async function afterFullGc() {
  globalThis.gc();
  const start = performance.now();
  const cpuStart = cpuMs();
  assertCounts(contender.label, workload, await contender.run(workload));
  afterGcTimes.push(performance.now() - start);
  while (cpuMs() - cpuStart < rewarmMs) assertCounts(contender.label, workload, await contender.run(workload));
  globalThis.gc({ type: 'minor' });
}

/** The process's CPU time so far (user + system, all threads), in ms. */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
