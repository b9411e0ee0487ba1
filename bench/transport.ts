/**
 * Transport benchmark (`npm run bench:transport`):
 *  1. wire bytes of a 2 KB reply streamed in 4-character deltas, against the reply's length:
 *     every event as plain JSON (what a naive SSE endpoint sends: each MessageUpdate with its
 *     whole partial message), phi-rx frames one per event, and phi-rx frames with the hub's
 *     default coalescing (a burst of deltas of one block is one frame);
 *  2. events per second through EventStreamHub (serializer, replay buffer) → loopback HTTP →
 *     fromEventStream (SSE parsing, JSON, partial rebuild), server and client in this one process.
 *
 *   npx tsx bench/transport.ts [runs]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { lastValueFrom, Observable, tap, toArray } from 'rxjs';
import { agentLoop, emptyAssistant, userMessage, type AgentEvent } from '../src/index.js';
import { scriptedModel, scriptedProvider } from '../src/testing/index.js';
import { fromEventStream } from '../src/protocols/transport/index.js';
import { EventStreamHub, type EventStreamHubOptions } from '../src/protocols/transport/node/index.js';

const runs = Math.max(3, Number(process.argv[2] ?? 7));

async function withHub<T>(options: Omit<EventStreamHubOptions, 'authorize'>, body: (hub: EventStreamHub, url: string) => Promise<T>): Promise<T> {
  const hub = new EventStreamHub({ authorize: 'allow-all', ...options }); // a keyless benchmark on loopback
  const server = createServer((req, res) => void (hub.handle(req, res) || res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await body(hub, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    hub.close();
    server.closeAllConnections();
    server.close();
  }
}

// ---- 1. wire bytes ---------------------------------------------------------------------------
const reply = 'Streaming agent events to a page costs bytes linear in the reply. '.repeat(40).slice(0, 2048);
const replyRun = () =>
  agentLoop([userMessage('Write 2 KB', 0)], { systemPrompt: '', messages: [], tools: [] }, { model: scriptedModel(), provider: scriptedProvider([{ text: reply }], { chunkSize: 4 }), retry: false });

async function wireBytes(coalesceDeltasMs: number | false): Promise<{ total: number; deltas: number; frames: number }> {
  return withHub({ coalesceDeltasMs }, async (hub, url) => {
    const id = hub.start(replyRun());
    const text = await (await fetch(`${url}/runs/${id}/events`)).text();
    const frames = text.split('\n\n').filter((f) => f.includes('event: MessageUpdate'));
    return { total: Buffer.byteLength(text), deltas: frames.reduce((n, f) => n + Buffer.byteLength(f) + 2, 0), frames: frames.length };
  });
}

let naiveTotal = 0;
let naiveDeltas = 0;
let naiveFrames = 0;
await lastValueFrom(
  replyRun().pipe(
    tap((e) => {
      const bytes = Buffer.byteLength(`data: ${JSON.stringify(e)}\n\n`);
      naiveTotal += bytes;
      if (e.type === 'MessageUpdate') {
        naiveDeltas += bytes;
        naiveFrames++;
      }
    }),
  ),
);
const perEvent = await wireBytes(false);
const coalesced = await wireBytes(0);
const ratio = (n: number) => `${(n / reply.length).toFixed(2)}×`;
console.log(`\n**Wire bytes** — a ${reply.length}-character reply in 4-character deltas (${naiveFrames} deltas)\n`);
console.log('| encoding | MessageUpdate frames | their bytes | × reply | whole stream bytes | × reply |');
console.log('|---|---:|---:|---:|---:|---:|');
console.log(`| every event as JSON (partial message included) | ${naiveFrames} | ${naiveDeltas.toLocaleString('en')} | ${ratio(naiveDeltas)} | ${naiveTotal.toLocaleString('en')} | ${ratio(naiveTotal)} |`);
console.log(`| phi-rx frames, one per event (\`coalesceDeltasMs: false\`) | ${perEvent.frames} | ${perEvent.deltas.toLocaleString('en')} | ${ratio(perEvent.deltas)} | ${perEvent.total.toLocaleString('en')} | ${ratio(perEvent.total)} |`);
console.log(`| phi-rx frames, coalesced (default) | ${coalesced.frames} | ${coalesced.deltas.toLocaleString('en')} | ${ratio(coalesced.deltas)} | ${coalesced.total.toLocaleString('en')} | ${ratio(coalesced.total)} |`);

// ---- 2. events per second ----------------------------------------------------------------------
const N = 100_000;
const loopId = 'bench.cfg.1';
/** N text deltas, emitted 1,000 per macrotask (a live run, not one synchronous burst). */
function syntheticRun(): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    subscriber.next({ type: 'AgentStart', agentId: 'a', sessionId: 's', loopId, timestamp: 0 });
    subscriber.next({ type: 'MessageStart', loopId, message: emptyAssistant('m', 'p', 0), timestamp: 0 });
    let sent = 0;
    const batch = () => {
      for (let i = 0; i < 1000 && sent < N; i++, sent++) {
        subscriber.next({ type: 'MessageUpdate', loopId, message: undefined as never, delta: { type: 'text', contentIndex: 0, delta: 'abcd' }, timestamp: sent });
      }
      if (sent < N) return void setImmediate(batch);
      subscriber.next({ type: 'AgentEnd', loopId, messages: [], usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: N, stopReason: 'stop' });
      subscriber.complete();
    };
    setImmediate(batch);
  });
}

async function eventsPerSecond(): Promise<number> {
  return withHub({ coalesceDeltasMs: false, bufferSize: N + 10 }, async (hub, url) => {
    const started = performance.now();
    const id = hub.start(syntheticRun());
    const events = await lastValueFrom(fromEventStream(`${url}/runs/${id}/events`).pipe(toArray()));
    const seconds = (performance.now() - started) / 1000;
    const last = events.at(-2);
    if (events.length !== N + 3 || last?.type !== 'MessageUpdate' || last.message.content[0]?.type !== 'text' || last.message.content[0].text.length !== 4 * N) {
      throw new Error(`bench: expected ${N + 3} events and ${4 * N} characters rebuilt`);
    }
    return events.length / seconds;
  });
}

await eventsPerSecond(); // warm-up
const rates: number[] = [];
for (let i = 0; i < runs; i++) rates.push(await eventsPerSecond());
rates.sort((a, b) => a - b);
const median = rates[Math.floor(rates.length / 2)]!;
console.log(`\n**Events per second** — ${N.toLocaleString('en')} deltas + 3 events, EventStreamHub → loopback HTTP → fromEventStream (partials rebuilt), one process; median of ${runs} runs after a warm-up\n`);
console.log(`| median events/s | min | max |\n|---:|---:|---:|\n| ${Math.round(median).toLocaleString('en')} | ${Math.round(rates[0]!).toLocaleString('en')} | ${Math.round(rates.at(-1)!).toLocaleString('en')} |`);
