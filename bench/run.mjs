// `npm run bench`: the loop-overhead benchmark of issue #7 and the SSE parsing benchmark.
//
//   node bench/run.mjs [--json] [--preset long|wide] [--gc steady,forced] [--runs 7] [--warmup N] [--warmup-ms 1000] [--rewarm-ms 500] [--only a,b]
//                      [--no-sse] [--no-flat] [--markdown FILE] [--baseline FILE]
//
// `--baseline FILE` measures an older bundle of phi-rx (a copy of .tmp/bench/phi-rx.mjs saved
// before a change) as one more contender, `phi-baseline`, so that before and after share a run.
//
// Every contender runs in its own child process (warm-up, then measured runs — `--runs` for
// wide, three times that for long, flatness and SSE — counts asserted, peak RSS read from that
// process). The anchors are devDependencies of bench/ only and are
// installed on first use. phi-rx's sources are bundled to plain JS first (esbuild), so the
// measured processes carry no TypeScript loader.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRESETS, expectedCounts } from './workload.mjs';
import { hasRecording, recordingPath } from './sse-stream.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..');
const buildDir = path.join(root, '.tmp', 'bench');

const args = parseArgs(process.argv.slice(2));
const log = (line = '') => process.stderr.write(`${line}\n`);

ensureBenchDependencies();
const features = await buildPhi();
if (args.buildOnly) process.exit(0); // bench/agent-memory.mjs: the bundle only

const CONTENDERS = [
  { id: 'floor', short: 'floor (async generators)' },
  { id: 'phi-agent-loop', short: 'phi-rx agentLoop' },
  features.recordSession && { id: 'phi-record-session', short: 'phi-rx agentLoop + recordSession' },
  features.basicAgent && { id: 'phi-basic-agent', short: 'phi-rx BasicAgent' },
  features.basicAgent && features.recordSession && { id: 'phi-basic-record', short: 'phi-rx BasicAgent + recordSession' },
  // The server contenders (issue 35, `npm run bench:server`): measured when `--only` names them.
  features.defineAgent && features.recordSession && { id: 'phi-definition', short: 'phi-rx defineAgent session + recordSession', extra: true },
  features.basicAgent && features.recordSession && { id: 'phi-basic-inline', short: 'phi-rx BasicAgent + recordSession, tool defined per conversation', extra: true },
  { id: 'pi-agent-core', short: 'pi-agent-core agentLoop' },
  { id: 'pi-agent', short: 'pi-agent-core Agent', extra: true },
  // The AI SDK takes ~50 s per wide run once its model's parts arrive asynchronously: long only.
  { id: 'ai-sdk', short: 'AI SDK streamText', presets: ['long'] },
].filter(Boolean).filter((c) => (args.only ? args.only.includes(c.id) : !c.extra));
if (args.baseline) {
  // The baseline bundle runs agentLoop, and BasicAgent when that is measured too, each right after the current one.
  const baselines = [
    { after: 'phi-agent-loop', id: 'phi-baseline', short: 'phi-rx agentLoop (baseline bundle)' },
    { after: 'phi-basic-agent', id: 'phi-basic-baseline', short: 'phi-rx BasicAgent (baseline bundle)' },
  ];
  for (const b of baselines) {
    const at = CONTENDERS.findIndex((c) => c.id === b.after);
    if (at >= 0 || b.id === 'phi-baseline') CONTENDERS.splice(at + 1, 0, { id: b.id, file: b.after, short: b.short, env: { PHI_RX_BUNDLE: args.baseline } });
  }
}

const report = { node: process.version, date: new Date().toISOString(), loadAverage: os.loadavg()[0], runs: args.runs, warmupMs: args.warmupMs, rewarmMs: args.rewarmMs, presets: {}, flatness: undefined, sse: undefined, targets: [] };
const started = Date.now();

for (const preset of args.presets) {
  const workload = PRESETS[preset];
  // A long run takes milliseconds, so it gets three times the runs (GC makes single runs noisy);
  // one wide run is thousands of agent turns, plenty to warm the JIT up.
  const runs = preset === 'long' ? 3 * args.runs : args.runs;
  const warmup = args.warmup ?? (preset === 'wide' ? 1 : 10);
  for (const gc of args.gc) {
    log(`\n[${preset}, ${gc} GC] ${describe(workload)}`);
    const results = [];
    for (const c of CONTENDERS.filter((x) => !x.presets || x.presets.includes(preset))) {
      log(`  ${c.short} ...`);
      results.push({ ...(await runChild(c, workload, warmup, runs, gc)), contender: c.id, short: c.short });
    }
    report.presets[`${preset}/${gc}`] = { preset, gc, workload, runs, warmup, expected: expectedCounts(workload), results: results.map(summarize) };
  }
}

if (args.flat && CONTENDERS.some((c) => c.id === 'phi-agent-loop')) {
  log('\n[flatness] cost per delta, N=200 vs N=2000 (K=50, T=4)');
  report.flatness = [];
  for (const c of CONTENDERS.filter((x) => x.id === 'phi-agent-loop' || x.id === 'phi-record-session' || x.id === 'floor')) {
    const row = { contender: c.id, short: c.short };
    for (const deltas of [200, 2000]) {
      // N=200 is the long preset itself: reuse its run when it was measured.
      const measured = deltas === PRESETS.long.deltas ? report.presets[`long/${args.gc[0]}`]?.results.find((r) => r.contender === c.id) : undefined;
      if (measured) row[`n${deltas}`] = measured;
      else {
        log(`  ${c.short}, N=${deltas} ...`);
        row[`n${deltas}`] = summarize({ ...(await runChild(c, { ...PRESETS.long, deltas }, 5, 3 * args.runs, args.gc[0])), contender: c.id, short: c.short });
      }
    }
    row.ratio = row.n2000.nsPerDelta / row.n200.nsPerDelta;
    report.flatness.push(row);
  }
}

if (args.sse) {
  if (!features.anthropic) log('\n[sse] skipped: src/providers/anthropic.ts is not there yet');
  else if (!hasRecording()) log(`\n[sse] skipped: no recorded Anthropic stream at ${recordingPath()} (set PHI_RX_FIXTURES)`);
  else {
    log('\n[sse] ~1 MiB recorded Anthropic stream on 127.0.0.1');
    report.sse = await runSse();
  }
}

report.targets = targets(report);
report.seconds = Math.round((Date.now() - started) / 1000);
const markdown = toMarkdown(report);
if (args.markdown) writeFileSync(args.markdown, `${markdown}\n`);
if (args.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else process.stdout.write(`${markdown}\n`);

// ---- setup -----------------------------------------------------------------------------------

function ensureBenchDependencies() {
  if (existsSync(path.join(benchDir, 'node_modules'))) return;
  log('bench: installing the anchors (npm install --prefix bench) ...');
  execFileSync('npm', ['install', '--prefix', benchDir, '--no-audit', '--no-fund'], { stdio: ['ignore', 2, 2] });
}

/**
 * Bundles the phi-rx sources the benchmark uses (packages stay external): .tmp/bench/phi-rx.mjs for
 * the loop contenders, .tmp/bench/phi-rx-sse.mjs for the SSE readers. Code splitting keeps every
 * dynamic import of the sources (the provider registry's protocols, BasicAgent's MCP and OpenAPI
 * loaders) a separate chunk loaded on use, as it is in the published package: one big bundle would
 * load undici, the MCP SDK and swagger-parser into every contender's process.
 */
async function buildPhi() {
  const has = (file) => existsSync(path.join(root, 'src', file));
  const features = {
    recordSession: has('operators/record-session.ts') && has('session/recorder.ts'),
    basicAgent: has('agent/basic-agent.ts'),
    defineAgent: has('agent/define-agent.ts'),
    anthropic: has('providers/anthropic.ts') && has('sources/http/request.ts'),
  };
  const src = (file) => JSON.stringify(path.join(root, 'src', file));
  const loop = [
    `export { agentLoop } from ${src('loop/agent-loop.ts')};`,
    `export { scriptedProvider, scriptedModel } from ${src('testing/scripted-provider.ts')};`,
    `export { defineTool } from ${src('tools/define-tool.ts')};`,
    `export { userMessage } from ${src('types/message.ts')};`,
    `export { z } from 'zod';`,
    `export { AssistantMessageBuilder } from ${src('providers/message-builder.ts')};`,
    `export { Observable } from 'rxjs';`,
    `export const features = ${JSON.stringify(features)};`,
  ];
  if (features.recordSession) {
    loop.push(`export { recordSession } from ${src('operators/record-session.ts')};`, `export { SessionRecorder } from ${src('session/recorder.ts')};`);
  }
  if (features.basicAgent) {
    // MessageQueue and Broadcast: what the phi-agent-loop-wired contender gives agentLoop, as BasicAgent does.
    if (features.defineAgent) loop.push(`export { defineAgent } from ${src('agent/define-agent.ts')};`);
    loop.push(`export { BasicAgent } from ${src('agent/basic-agent.ts')};`, `export { MessageQueue } from ${src('sources/queues.ts')};`, `export { Broadcast } from ${src('sources/broadcast.ts')};`);
  }
  const sse = [
    `export { userMessage } from ${src('types/message.ts')};`,
    `export { createParser } from 'eventsource-parser';`,
    `export { request, Agent } from 'undici';`,
  ];
  if (features.anthropic) {
    sse.push(
      `export { createAnthropicProvider } from ${src('providers/anthropic.ts')};`,
      `export { getHttpDispatcher } from ${src('sources/http/request.ts')};`,
    );
  }
  rmSync(path.join(buildDir, 'chunks'), { recursive: true, force: true }); // no stale chunks from an earlier build
  mkdirSync(buildDir, { recursive: true });
  writeFileSync(path.join(buildDir, 'phi-rx.ts'), `${loop.join('\n')}\n`);
  writeFileSync(path.join(buildDir, 'phi-rx-sse.ts'), `${sse.join('\n')}\n`);
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [path.join(buildDir, 'phi-rx.ts'), path.join(buildDir, 'phi-rx-sse.ts')],
    outdir: buildDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'silent',
  }).catch((error) => {
    const where = (error.errors ?? []).map((e) => `  ${e.location?.file}:${e.location?.line}: ${e.text}`).join('\n');
    throw new Error(`bench: phi-rx's sources do not bundle (is someone halfway through an edit?):\n${where || error.message}`);
  });
  return features;
}

// ---- children --------------------------------------------------------------------------------

function runChild(contender, workload, warmup, runs, gc) {
  const argv = [path.join(benchDir, 'child.mjs'), contender.file ?? contender.id, JSON.stringify(workload), String(warmup), String(runs), String(args.warmupMs), gc, String(args.rewarmMs)];
  return runNode(gc === 'forced' ? ['--expose-gc', ...argv] : argv, contender.env);
}

function runSse() {
  // The baseline's SSE readers are in its sibling phi-rx-sse.mjs (a copy of .tmp/bench keeps both).
  const sseBaseline = args.baseline && path.join(path.dirname(args.baseline), 'phi-rx-sse.mjs');
  return runNode([path.join(benchDir, 'sse.mjs'), String(3 * args.runs)], sseBaseline && existsSync(sseBaseline) ? { PHI_RX_BASELINE: sseBaseline } : undefined);
}

function runNode(argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'], cwd: root, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`bench child failed (exit ${code}): node ${argv.map((a) => path.basename(a)).join(' ')}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()));
    });
  });
}

// ---- numbers ---------------------------------------------------------------------------------

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function summarize(r) {
  const ms = median(r.times);
  const deltas = r.counts.textDeltas;
  return {
    contender: r.contender,
    short: r.short,
    label: r.label,
    medianMs: ms,
    minMs: Math.min(...r.times),
    maxMs: Math.max(...r.times),
    times: r.times,
    cpuMedianMs: median(r.cpuTimes),
    afterGcMedianMs: r.afterGcTimes?.length ? median(r.afterGcTimes) : undefined,
    warmupRuns: r.warmupRuns,
    nsPerDelta: (ms * 1e6) / deltas,
    deltasPerSecond: deltas / (ms / 1000),
    counts: r.counts,
    baselineRssMB: r.baselineRssBytes / 2 ** 20,
    firstRunPeakRssMB: r.firstRunPeakRssBytes / 2 ** 20,
    peakRssMB: r.peakRssBytes / 2 ** 20,
  };
}

function byId(results, id) {
  return results.find((r) => r.contender === id);
}

function bestAnchor(results) {
  const anchors = results.filter((r) => r.contender === 'pi-agent-core' || r.contender === 'ai-sdk');
  return anchors.sort((a, b) => a.medianMs - b.medianMs)[0];
}

function targets(rep) {
  const out = [];
  const add = (name, value, limit, pass, unit, cpu) => out.push({ name, value, limit, pass, unit, cpu });
  const ratio = (a, b) => a.medianMs / b.medianMs;
  // The same ratio of the processes' CPU time per run: what a loaded machine distorts least.
  const cpuRatio = (a, b) => a.cpuMedianMs / b.cpuMedianMs;
  for (const p of Object.values(rep.presets)) {
    const r = p.results;
    const phi = byId(r, 'phi-agent-loop');
    const floor = byId(r, 'floor');
    const basic = byId(r, 'phi-basic-agent');
    const rec = byId(r, 'phi-record-session');
    const basicRec = byId(r, 'phi-basic-record');
    const tag = `${p.preset}, ${p.gc} GC`;
    const floorLimit = p.preset === 'long' ? 1.5 : 2;
    if (phi && floor) add(`${tag}: phi-rx agentLoop / floor`, ratio(phi, floor), `≤ ${floorLimit}×`, ratio(phi, floor) <= floorLimit, '×', cpuRatio(phi, floor));
    if (phi && basic) add(`${tag}: BasicAgent / agentLoop`, ratio(basic, phi), '≤ 1.2×', ratio(basic, phi) <= 1.2, '×', cpuRatio(basic, phi));
    if (rec && basicRec) add(`${tag}: BasicAgent + recordSession / agentLoop + recordSession`, ratio(basicRec, rec), '(for reading)', undefined, '×', cpuRatio(basicRec, rec));
    if (phi && rec) add(`${tag}: agentLoop + recordSession / agentLoop`, ratio(rec, phi), '≤ 1.3×', ratio(rec, phi) <= 1.3, '×', cpuRatio(rec, phi));
    const base = byId(r, 'phi-baseline');
    if (phi && base) add(`${tag}: phi-rx agentLoop / baseline bundle`, ratio(phi, base), '(for reading)', undefined, '×', cpuRatio(phi, base));
    const basicBase = byId(r, 'phi-basic-baseline');
    if (basic && basicBase) add(`${tag}: BasicAgent / baseline bundle`, ratio(basic, basicBase), '(for reading)', undefined, '×', cpuRatio(basic, basicBase));
    if (p.preset === 'wide' && phi && floor) {
      const over = phi.firstRunPeakRssMB - floor.firstRunPeakRssMB;
      add(`${tag}: agentLoop peak RSS over the floor's (one run, fresh process)`, over, '≤ 30 MB', over <= 30, ' MB');
      // For reading the one above: how much of it is the run, not the libraries loaded before it.
      const growth = phi.firstRunPeakRssMB - phi.baselineRssMB - (floor.firstRunPeakRssMB - floor.baselineRssMB);
      add(`${tag}: of which the run's own growth over the floor's (peak minus RSS after import)`, growth, '(for reading)', undefined, ' MB');
    }
  }
  for (const row of rep.flatness ?? []) {
    if (row.contender === 'phi-agent-loop' || row.contender === 'phi-record-session') {
      add(`flat: ${row.short} ns/delta N=2000 / N=200`, row.ratio, '≤ 1.2×', row.ratio <= 1.2, '×');
    }
  }
  if (rep.sse) add('sse: phi-rx Anthropic provider / eventsource-parser alone', rep.sse.ratio, '≤ 1.2×', rep.sse.ratio <= 1.2, '×');
  return out;
}

// ---- output ----------------------------------------------------------------------------------

function fmt(n, digits = 1) {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function describe(w) {
  const e = expectedCounts(w);
  return `${w.agents} agent(s) × K=${w.turns} turns, N=${w.deltas} deltas, T=${w.tools} tools: ${e.textDeltas.toLocaleString('en-US')} deltas, ${e.toolExecutions.toLocaleString('en-US')} tool runs`;
}

function toMarkdown(rep) {
  const out = [];
  out.push(
    `Node ${rep.node}, ${machine()}, load average ${fmt(rep.loadAverage, 1)} at the start; medians of the measured runs after warm-up, ` +
      'each contender in its own process; "CPU" is the process\'s user+system time per run (it includes GC threads); ' +
      'peak RSS of the process after its first run (a fresh process, one run) and after all runs.',
  );
  for (const p of Object.values(rep.presets)) {
    out.push(
      '',
      `**${p.preset}, ${p.gc === 'forced' ? `GC forced before each run (full GC, ${fmt(rep.rewarmMs / 1000, 1)} s of re-warm runs, minor GC)` : 'steady state (no forced GC)'}** — ${describe(p.workload)}; warm-up of at least ${p.warmup} run(s) and ${fmt(rep.warmupMs / 1000, 1)} s, then ${p.runs} measured runs per contender`,
      '',
    );
    const forced = p.gc === 'forced';
    out.push(
      `| contender | ms / run (min–max) | CPU ms | ns / delta | deltas / s | events | warm-up runs | peak RSS: 1st run / all runs |${forced ? ' 1st run after a full GC, ms |' : ''}`,
      `|---|---:|---:|---:|---:|---:|---:|---:|${forced ? '---:|' : ''}`,
    );
    for (const r of p.results) {
      out.push(
        `| ${r.short} | ${fmt(r.medianMs)} (${fmt(r.minMs)}–${fmt(r.maxMs)}) | ${fmt(r.cpuMedianMs)} | ${fmt(r.nsPerDelta, 0)} | ${fmt(r.deltasPerSecond / 1e6, 2)} M | ${r.counts.events.toLocaleString('en-US')} | ${r.warmupRuns ?? '–'} | ${fmt(r.firstRunPeakRssMB, 0)} / ${fmt(r.peakRssMB, 0)} MB |${forced ? ` ${r.afterGcMedianMs === undefined ? '–' : fmt(r.afterGcMedianMs)} |` : ''}`,
      );
    }
    const phi = byId(p.results, 'phi-agent-loop');
    const floor = byId(p.results, 'floor');
    const anchor = bestAnchor(p.results);
    const ratios = [];
    if (phi && floor) ratios.push(`phi-rx / floor = ${fmt(phi.medianMs / floor.medianMs, 2)}×`);
    if (phi && anchor) ratios.push(`phi-rx / best anchor (${anchor.short}) = ${fmt(phi.medianMs / anchor.medianMs, 2)}× (${fmt(anchor.medianMs / phi.medianMs, 1)}× faster)`);
    const baseline = byId(p.results, 'phi-baseline');
    if (phi && baseline) ratios.push(`phi-rx / baseline bundle = ${fmt(phi.medianMs / baseline.medianMs, 2)}×`);
    // The server contenders (issue 35): each against the floor and pi-agent-core's Agent.
    const piAgent = byId(p.results, 'pi-agent');
    for (const id of ['phi-definition', 'phi-basic-inline', 'phi-basic-record', 'pi-agent']) {
      const r = byId(p.results, id);
      if (!r || !floor || !p.results.some((x) => x.contender === 'phi-definition' || x.contender === 'pi-agent')) continue;
      ratios.push(`${r.short} / floor = ${fmt(r.medianMs / floor.medianMs, 2)}× (CPU ${fmt(r.cpuMedianMs / floor.cpuMedianMs, 2)}×), peak RSS ${fmt(r.peakRssMB - floor.peakRssMB, 0)} MB over the floor's` +
        (piAgent && r !== piAgent ? `, / pi Agent = ${fmt(r.medianMs / piAgent.medianMs, 2)}×` : ''));
    }
    if (ratios.length) out.push('', ratios.join('; '));
  }
  if (rep.flatness) {
    out.push('', '**Cost per delta as N grows** (K=50, T=4, one agent)', '', '| contender | ns / delta, N=200 | ns / delta, N=2000 | ratio |', '|---|---:|---:|---:|');
    for (const row of rep.flatness) out.push(`| ${row.short} | ${fmt(row.n200.nsPerDelta, 0)} | ${fmt(row.n2000.nsPerDelta, 0)} | ${fmt(row.ratio, 2)}× |`);
  }
  if (rep.sse) {
    const s = rep.sse;
    out.push('', `**SSE parsing** — ${s.description}`, '', '| contender | ms / stream (min–max) | MB/s | events |', '|---|---:|---:|---:|');
    for (const r of s.results) out.push(`| ${r.label} | ${fmt(r.medianMs, 2)} (${fmt(r.minMs, 2)}–${fmt(r.maxMs, 2)}) | ${fmt(r.mbPerSecond, 0)} | ${r.events.toLocaleString('en-US')} |`);
    const base = s.results.find((r) => r.id === 'phi-rx-baseline');
    const phiMs = s.results.find((r) => r.id === 'phi-rx').medianMs;
    out.push(
      '',
      `phi-rx provider / eventsource-parser alone = ${fmt(s.ratio, 2)}×; / eventsource-parser + JSON.parse = ${fmt(s.ratioJson, 2)}×` +
        (base ? `; / baseline bundle = ${fmt(phiMs / base.medianMs, 2)}×` : ''),
    );
  }
  if (rep.targets.length) {
    out.push('', '**Targets** (met or missed on wall-clock medians; the same ratio of CPU time per run beside it)', '', '| target | measured | CPU time ratio | limit | |', '|---|---:|---:|---:|---|');
    for (const t of rep.targets) {
      out.push(`| ${t.name} | ${fmt(t.value, 2)}${t.unit} | ${t.cpu === undefined ? '' : `${fmt(t.cpu, 2)}×`} | ${t.limit} | ${t.pass === undefined ? '' : t.pass ? 'met' : '**missed**'} |`);
    }
  }
  out.push('', `Reproduce: \`npm run bench\` (${rep.seconds} s here; \`npm run -s bench -- --json\` for machines).`);
  return out.join('\n');
}

function machine() {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}`;
}

// ---- arguments -------------------------------------------------------------------------------

function parseArgs(argv) {
  const a = { json: false, presets: ['long', 'wide'], gc: ['steady', 'forced'], runs: 7, warmup: undefined, warmupMs: 1000, rewarmMs: 500, only: undefined, sse: true, flat: true, markdown: undefined, baseline: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`bench: ${arg} needs a value`);
      return v;
    };
    if (arg === '--json') a.json = true;
    else if (arg === '--preset') a.presets = value().split(',');
    else if (arg === '--gc') a.gc = value().split(',');
    else if (arg === '--runs') a.runs = Math.max(1, Number(value())); // below 7 only while developing
    else if (arg === '--warmup') a.warmup = Number(value());
    else if (arg === '--warmup-ms') a.warmupMs = Number(value());
    else if (arg === '--rewarm-ms') a.rewarmMs = Number(value());
    else if (arg === '--only') a.only = value().split(',');
    else if (arg === '--no-sse') a.sse = false;
    else if (arg === '--build-only') a.buildOnly = true;
    else if (arg === '--no-flat') a.flat = false;
    else if (arg === '--markdown') a.markdown = path.resolve(value());
    else if (arg === '--baseline') a.baseline = path.resolve(value());
    else throw new Error(`bench: unknown argument ${arg} (see the header of bench/run.mjs)`);
  }
  for (const p of a.presets) if (!PRESETS[p]) throw new Error(`bench: unknown preset ${p} (long, wide)`);
  for (const g of a.gc) if (g !== 'steady' && g !== 'forced') throw new Error(`bench: unknown --gc ${g} (steady, forced)`);
  return a;
}
