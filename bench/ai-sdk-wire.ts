/**
 * AI SDK UI message stream benchmark (`npx tsx bench/ai-sdk-wire.ts [runs]`):
 *  1. wire bytes of a 2 KB reply streamed in 4-character deltas: the UI message stream
 *     (`uiMessageChunks` as SSE frames) next to phi-rx's own wire, one frame per event;
 *  2. chunks per second through `uiMessageChunks` + SSE encoding, and the cost per delta for a
 *     turn of N = 200 and N = 2,000 deltas (flat: no chunk copies the text so far).
 */
import { performance } from 'node:perf_hooks';
import { count, from, lastValueFrom, map, toArray } from 'rxjs';
import { agentLoop, userMessage, type AgentEvent } from '../src/index.js';
import { scriptedModel, scriptedProvider } from '../src/testing/index.js';
import { encodeUIMessageChunk, uiMessageChunks } from '../src/protocols/ai-sdk/index.js';
import { createWireEncoder, encodeSseEvent } from '../src/protocols/transport/wire.js';

const runs = Math.max(3, Number(process.argv[2] ?? 7));
const run = (text: string) =>
  lastValueFrom(agentLoop([userMessage('go', 0)], { systemPrompt: '', messages: [], tools: [] }, { model: scriptedModel(), provider: scriptedProvider([{ text }], { chunkSize: 4 }), retry: false }).pipe(toArray()));
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const reply = 'Streaming agent events to a page costs bytes linear in the reply. '.repeat(40).slice(0, 2048);
const events = await run(reply);
const uiBytes = (await lastValueFrom(from(events).pipe(uiMessageChunks(), map(encodeUIMessageChunk), toArray()))).join('').length;
const encode = createWireEncoder();
const phiBytes = events.map((e, i) => encodeSseEvent(i + 1, encode(e))).join('').length;
console.log(`wire bytes, 2,048-character reply in 4-character deltas (${events.length} events):`);
console.log(`  AI SDK UI message stream: ${uiBytes} B (${(uiBytes / reply.length).toFixed(1)}x the reply)`);
console.log(`  phi-rx wire, a frame per event: ${phiBytes} B (${(phiBytes / reply.length).toFixed(1)}x)`);

async function perDelta(n: number): Promise<{ nsPerDelta: number; chunksPerSec: number }> {
  const evs: AgentEvent[] = await run('abcd'.repeat(n));
  const times: number[] = [];
  let chunks = 0;
  const pass = () => lastValueFrom(from(evs).pipe(uiMessageChunks(), map(encodeUIMessageChunk), count()));
  for (let i = 0; i < 3; i++) await pass(); // warm-up
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    chunks = await pass();
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  return { nsPerDelta: (ms * 1e6) / n, chunksPerSec: chunks / (ms / 1000) };
}
for (const n of [200, 2000]) {
  const { nsPerDelta, chunksPerSec } = await perDelta(n);
  console.log(`N = ${n} deltas: ${Math.round(nsPerDelta)} ns per delta, ${Math.round(chunksPerSec).toLocaleString('en')} chunks/s (median of ${runs})`);
}
