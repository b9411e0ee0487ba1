// `npm run bench:e2e`: N conversations at once, end to end on loopback, each a model stream read from a real
// HTTP SSE endpoint (bench/e2e/upstream.mjs, in Anthropic's and OpenAI's wire formats) and relayed to its own
// SSE client. Three processes per measurement: the model endpoint, the server under test, and this one (the
// clients). The server's own CPU time and RSS are what is reported.
//
//   node bench/e2e.mjs [--conversations 500] [--wire anthropic,openai] [--rate 0,30] [--only floor,phi]
//                      [--turns 3] [--deltas 50] [--warmup 100] [--json]
//
// Contenders: `floor` (bench/e2e/serve-floor.mjs: fetch + eventsource-parser + JSON.parse + res.write, by hand)
// and `phi` (bench/e2e/serve-phi.ts: a `defineAgent` session per conversation, recorded with `recordSession`,
// served by EventStreamHub). `--rate 0` streams as fast as the endpoint can write; `--rate 30` paces each stream
// at 30 deltas per second (a model's token rate). Each conversation has `turns` turns of `deltas` text deltas,
// every turn but the last ending with one tool call. Reported per contender: the server's CPU time per delta
// relayed, deltas relayed per second of server CPU (per core), its CPU % of one core over the run, its RSS
// before and at the peak (and per conversation), and the latency from the byte written by the model endpoint
// to the frame read by the client (p50 / p99; the floor's is the transport's own share, the rest is added).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const conversations = Number(option('--conversations', 500));
const wires = option('--wire', 'anthropic,openai').split(',');
const rates = option('--rate', '0,30').split(',').map(Number);
const only = option('--only', 'floor,phi').split(',');
const turns = Number(option('--turns', 3));
const deltas = Number(option('--deltas', 50));
const warmup = Number(option('--warmup', 100));
const log = (line) => process.stderr.write(`${line}\n`);
const SERVERS = {
  floor: { label: 'floor (fetch + eventsource-parser + JSON.parse + res.write)', args: [path.join(benchDir, 'e2e', 'serve-floor.mjs')] },
  phi: { label: 'phi-rx defineAgent session + recordSession → EventStreamHub', args: ['--import', 'tsx', path.join(benchDir, 'e2e', 'serve-phi.ts')] },
};

/** Starts a node process that prints `{ port }` on its first line. */
async function start(args) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: path.resolve(benchDir, '..') });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before listening`)));
  });
  return { child, url: `http://127.0.0.1:${JSON.parse(line).port}` };
}

const getJson = async (url, init) => (await fetch(url, init)).json();

/** One conversation from the client's side: start it, read its SSE stream to the end, note each delta's latency. */
async function conversation(server, latencies) {
  const { id } = await getJson(`${server}/start`, { method: 'POST' });
  const response = await fetch(`${server}/runs/${id}/events`);
  if (!response.ok) throw new Error(`GET events: ${response.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let seen = 0;
  for await (const chunk of response.body) {
    const at = performance.timeOrigin + performance.now();
    buffer += decoder.decode(chunk, { stream: true });
    const frames = buffer.split('\n\n');
    buffer = frames.pop();
    for (const frame of frames) {
      // Only the delta frames (phi-rx: MessageUpdate; the floor: delta): the final message repeats the text.
      if (!/^event: (MessageUpdate|delta)$/m.test(frame)) continue;
      for (const m of frame.matchAll(/(\d{13}\.\d{3})\|/g)) {
        latencies?.push(at - Number(m[1]));
        seen++;
      }
    }
  }
  return seen;
}

async function measure(id, wire, rate) {
  const upstream = await start([path.join(benchDir, 'e2e', 'upstream.mjs'), String(turns), String(deltas), String(rate)]);
  const server = await start([...SERVERS[id].args, upstream.url, wire]).catch((error) => {
    upstream.child.kill();
    throw error;
  });
  try {
    // Warm-up: the JIT, the connection pools.
    await Promise.all(Array.from({ length: Math.min(warmup, conversations) }, () => conversation(server.url)));
    const before = await getJson(`${server.url}/stats`);
    let peakRss = before.rss;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakRss = Math.max(peakRss, (await getJson(`${server.url}/stats`)).rss);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const latencies = [];
    const started = performance.now();
    const seen = await Promise.all(Array.from({ length: conversations }, () => conversation(server.url, latencies)));
    const wallMs = performance.now() - started;
    sampling = false;
    await sampler;
    const after = await getJson(`${server.url}/stats`);
    const total = seen.reduce((a, b) => a + b, 0);
    const expected = conversations * turns * deltas;
    if (total !== expected) throw new Error(`${id}: the clients read ${total} deltas, expected ${expected}`);
    latencies.sort((a, b) => a - b);
    const cpuUs = after.cpuUs - before.cpuUs;
    return {
      id, wire, rate, conversations, deltas: total, wallMs, cpuUsPerDelta: cpuUs / total, deltasPerCpuSecond: total / (cpuUs / 1e6),
      cpuPercent: (100 * cpuUs) / 1000 / wallMs, rssBefore: before.rss, peakRss, rssPerConversationKb: (peakRss - before.rss) / conversations / 1024,
      p50Ms: latencies[Math.floor(latencies.length * 0.5)], p99Ms: latencies[Math.floor(latencies.length * 0.99)],
    };
  } finally {
    server.child.kill();
    upstream.child.kill();
  }
}

const rows = [];
for (const rate of rates) {
  for (const wire of wires) {
    for (const id of only) {
      log(`e2e: ${id}, ${wire}, ${rate > 0 ? `${rate} deltas/s` : 'as fast as possible'}, ${conversations} conversations ...`);
      rows.push(await measure(id, wire, rate));
    }
  }
}

if (argv.includes('--json')) {
  console.log(JSON.stringify({ node: process.version, conversations, turns, deltas, rows }, null, 2));
} else {
  const f = (n, d = 1) => n.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d });
  const mb = (n) => `${f(n / 2 ** 20, 0)} MB`;
  console.log(`**End to end on loopback** — ${conversations} conversations at once, each ${turns} turns of ${deltas} deltas (a tool call between turns), model endpoint → server → its own SSE client; the server process's CPU and RSS`);
  console.log('');
  console.log('| wire | pace | contender | CPU µs / delta | × floor | deltas / CPU s | CPU % (1 core) | RSS before → peak | per conversation | latency p50 / p99 |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const floor = rows.find((x) => x.id === 'floor' && x.wire === r.wire && x.rate === r.rate);
    const ratio = floor ? `${(r.cpuUsPerDelta / floor.cpuUsPerDelta).toFixed(2)}×` : '';
    console.log(`| ${r.wire} | ${r.rate > 0 ? `${r.rate}/s` : 'max'} | ${SERVERS[r.id].label} | ${f(r.cpuUsPerDelta)} | ${ratio} | ${f(r.deltasPerCpuSecond, 0)} | ${f(r.cpuPercent, 0)} | ${mb(r.rssBefore)} → ${mb(r.peakRss)} | ${f(r.rssPerConversationKb, 0)} KB | ${f(r.p50Ms, 2)} / ${f(r.p99Ms, 2)} ms |`);
  }
}
