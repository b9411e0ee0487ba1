// One contender in its own process: warm-up runs (at least one, and at least `warmupMs` of them),
// then measured runs, each asserted to have done the whole workload. Prints one JSON line: the run
// times, the counts, the peak RSS.
//
//   node [--expose-gc] bench/child.mjs <contender> '<workload json>' <warmups> <runs> [warmupMs] [steady|forced]
//
// Two protocols: `steady` (no forced GC: runs pay for their own garbage, as in a long-lived server)
// and `forced` (a full gc() right before each timed run, so that no run pays for an earlier one's
// garbage; needs --expose-gc).
import { performance } from 'node:perf_hooks';
import { assertCounts } from './workload.mjs';

const [name, workloadJson, warmupArg, runsArg, warmupMsArg] = process.argv.slice(2);
const workload = JSON.parse(workloadJson);
const warmups = Number(warmupArg);
const runs = Number(runsArg);
const warmupMs = Number(warmupMsArg ?? 0);
const gcMode = process.argv[7] ?? 'steady';
if (gcMode === 'forced' && typeof globalThis.gc !== 'function') throw new Error('bench child: forced GC needs node --expose-gc');

const contender = await import(`./contenders/${name}.mjs`);
const baselineRss = process.memoryUsage().rss;

// The first run in a fresh process gives the footprint of one run of the workload (peak RSS so
// far); the peak over all runs is reported too (the steady state of a process that keeps going).
assertCounts(contender.label, workload, await contender.run(workload));
const firstRunPeakRss = process.resourceUsage().maxRSS * 1024;
// Warm-up is counted in runs and in time: the JIT reaches a loop's steady state after a number of
// calls, not of runs (a few-millisecond run needs many more runs than a slow one).
const warmStart = performance.now();
let warmupRuns = 1;
for (; warmupRuns < warmups || performance.now() - warmStart < warmupMs; warmupRuns++) {
  assertCounts(contender.label, workload, await contender.run(workload));
}

const times = [];
const cpuTimes = [];
let counts;
for (let i = 0; i < runs; i++) {
  if (gcMode === 'forced') globalThis.gc();
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
    counts,
    baselineRssBytes: baselineRss,
    firstRunPeakRssBytes: firstRunPeakRss,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  })}\n`,
);
