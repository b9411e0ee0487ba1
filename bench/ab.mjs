// `npm run bench:ab -- --a <bundle> --b <bundle>`: two builds of phi-rx in ONE process, their runs
// alternated, so that both share the machine's state (load, frequency, the process's heap). On a
// shared 2-core machine two child processes measured a few seconds apart differ by ±15 %, which
// hides the 3-8 % a change to the hot path is worth; alternated runs in one process do not.
//
//   node bench/ab.mjs --a .tmp/base/phi-rx.mjs [--b .tmp/bench/phi-rx.mjs] [--contender phi-agent-loop]
//                     [--preset wide|long] [--rounds 11] [--pairs 1]
//
// A bundle is what run.mjs builds into .tmp/bench (copy it away before rebuilding: `cp -r .tmp/bench .tmp/base`).
// Each round times one run of each build (after a warm-up of both), A first and B first in turn; two
// processes do the rounds, one loading A first and one B first, and B/A is the geometric mean of theirs:
// both the order of the runs and the order of loading favour one side by a few per cent, and cancel so.
// `--pairs N` runs N such pairs of processes and prints each pair's B/A and their spread: on a machine whose
// speed drifts, one pair can be off by several per cent, and the spread says how far.
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { PRESETS, assertCounts } from './workload.mjs';
import { phiCommon } from './contenders/phi-common.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const bundleA = option('--a');
const bundleB = option('--b', '.tmp/bench/phi-rx.mjs');
const contenderName = option('--contender', 'phi-agent-loop');
// `--contender-b <name>`: B runs another contender (with B's bundle; give `--b` the same bundle as `--a` to
// compare two contenders of one build, e.g. BasicAgent against agentLoop, in one process; `--contender floor`
// runs the floor, which uses no bundle, so that a target ratio is measured in one process too).
const contenderNameB = option('--contender-b', contenderName);
const preset = option('--preset', 'wide');
const rounds = Number(option('--rounds', '11'));
const pairs = Number(option('--pairs', '1'));
if (!bundleA) throw new Error('bench/ab.mjs: --a <bundle> is required (a phi-rx.mjs built by run.mjs, copied away)');
if (!PRESETS[preset]) throw new Error(`bench/ab.mjs: --preset must be one of ${Object.keys(PRESETS).join(', ')}`);
if (!Number.isInteger(rounds) || rounds < 3) throw new Error('bench/ab.mjs: --rounds must be a whole number, at least 3');
if (!Number.isInteger(pairs) || pairs < 1) throw new Error('bench/ab.mjs: --pairs must be a whole number, at least 1');

const workload = PRESETS[preset];
const contenders = {};
for (const name of new Set([contenderName, contenderNameB])) {
  contenders[name] = await import(`./contenders/${name}.mjs`);
  if (typeof contenders[name].runWith !== 'function' && typeof contenders[name].run !== 'function') throw new Error(`bench/ab.mjs: contender ${name} has neither runWith(common, workload) nor run(workload)`);
}
const contender = contenders[contenderName];
const contenderB = contenders[contenderNameB];

/** One build: its bundle loaded under its own URL (a query keeps two copies of one file apart), its contender run. */
async function build(file, tag, runner) {
  const phi = await import(`${pathToFileURL(path.resolve(file)).href}?${tag}`);
  const common = phiCommon(phi);
  return async () => {
    // A contender that is not phi-rx (the floor) has only run(workload): the bundle is not its concern.
    const counts = runner.runWith ? await runner.runWith(common, workload) : await runner.run(workload);
    assertCounts(`${runner.label} (${tag})`, workload, counts);
  };
}

async function timed(run) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return [performance.now() - start, (used.user + used.system) / 1000];
}

const median = (xs) => xs.slice().sort((x, y) => x - y)[xs.length >> 1];

/**
 * Rounds of both builds, A-B then B-A in turn (the run after the other build's garbage is favoured
 * by a few per cent: alternating the order cancels it): the medians of wall and CPU time per run.
 */
async function measure(a, b) {
  const perRound = workload.agents > 1 ? 1 : 20; // a long run takes milliseconds: more of them per round
  const warm = workload.agents > 1 ? 4 : 100;
  for (let i = 0; i < warm; i++) {
    await a();
    await b();
  }
  const wall = { a: [], b: [] };
  const cpu = { a: [], b: [] };
  for (let i = 0; i < rounds * perRound; i++) {
    for (const side of i % 2 === 0 ? ['a', 'b'] : ['b', 'a']) {
      const [w, c] = await timed(side === 'a' ? a : b);
      wall[side].push(w);
      cpu[side].push(c);
    }
  }
  return { a: median(wall.a), b: median(wall.b), cpuA: median(cpu.a), cpuB: median(cpu.b) };
}

if (argv.includes('--child')) {
  // One process: the builds loaded in the order given (`--first b` loads B first).
  const bFirst = option('--first', 'a') === 'b';
  const runs = {};
  for (const side of bFirst ? ['b', 'a'] : ['a', 'b']) runs[side] = await build(side === 'a' ? bundleA : bundleB, side, side === 'a' ? contender : contenderB);
  process.stdout.write(`${JSON.stringify(await measure(runs.a, runs.b))}\n`);
} else {
  // The build loaded second is favoured too (by 2-3 %, one build against itself): two processes, one
  // loading A first and one B first, and the geometric mean of their two B/A.
  const child = (first) => {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), ...argv, '--child', '--first', first], { encoding: 'utf8' });
    return JSON.parse(out.trim().split('\n').pop());
  };
  const labels = contenderB === contender ? contender.label : `A: ${contender.label}, B: ${contenderB.label}`;
  console.log(`${labels}, ${preset}: A = ${bundleA}, B = ${bundleB}, ${rounds} rounds in each of ${2 * pairs} processes`);
  const geomean = (xs) => Math.exp(xs.reduce((sum, x) => sum + Math.log(x), 0) / xs.length);
  const all = [];
  const pairRatios = [];
  for (let pair = 0; pair < pairs; pair++) {
    const results = [child('a'), child('b')];
    results.forEach((r, i) => {
      console.log(`${i === 0 ? 'A loaded first' : 'B loaded first'}: A ${r.a.toFixed(2)} ms (CPU ${r.cpuA.toFixed(2)}), B ${r.b.toFixed(2)} ms (CPU ${r.cpuB.toFixed(2)}); B/A ${(r.b / r.a).toFixed(3)}`);
    });
    all.push(...results);
    pairRatios.push(geomean(results.map((r) => r.b / r.a)));
    if (pairs > 1) console.log(`pair ${pair + 1}: B/A ${pairRatios[pair].toFixed(3)}`);
  }
  const spread = pairs > 1 ? `; pairs ${Math.min(...pairRatios).toFixed(3)}–${Math.max(...pairRatios).toFixed(3)}` : '';
  console.log(`B/A: ${geomean(all.map((r) => r.b / r.a)).toFixed(3)} (CPU ${geomean(all.map((r) => r.cpuB / r.cpuA)).toFixed(3)})${spread}`);
}
