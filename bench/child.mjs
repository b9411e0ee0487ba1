// One contender in its own process: warm-up runs (at least one, and at least `warmupMs` of them),
// then measured runs, each asserted to have done the whole workload. Prints one JSON line: the run
// times, the counts, the peak RSS.
//
//   node bench/child.mjs <contender> '<workload json>' <warmups> <runs> [warmupMs]
import { performance } from 'node:perf_hooks';
import { assertCounts } from './workload.mjs';

const [name, workloadJson, warmupArg, runsArg, warmupMsArg] = process.argv.slice(2);
const workload = JSON.parse(workloadJson);
const warmups = Number(warmupArg);
const runs = Number(runsArg);
const warmupMs = Number(warmupMsArg ?? 0);

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
  // No forced gc() between runs: a full collection right before a run shrinks the heap and leaves
  // sweeper threads running, which slows the next run by 2-4x (measured) and is nothing like
  // production. Runs pay for their own garbage as they would in a server.
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
