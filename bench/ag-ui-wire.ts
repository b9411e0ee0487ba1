/**
 * AG-UI benchmark (`npx tsx bench/ag-ui-wire.ts [runs]`):
 *  1. wire bytes of a 2 KB reply streamed in 4-character deltas: AG-UI events (`agUiEvents`) as SSE
 *     and as protobuf (`@ag-ui/encoder`), next to phi-rx's own wire, one frame per event;
 *  2. events per second through `agUiEvents` + SSE encoding, and the cost per delta for a turn of
 *     N = 200 and N = 2,000 deltas (flat: no event copies the text so far).
 */
import { performance } from 'node:perf_hooks';
import { from, lastValueFrom, map, toArray } from 'rxjs';
import { EventEncoder } from '@ag-ui/encoder';
import { agentLoop, userMessage, type AgentEvent } from '../src/index.js';
import { scriptedModel, scriptedProvider } from '../src/testing/index.js';
import { agUiEvents } from '../src/protocols/ag-ui/index.js';
import { createWireEncoder, encodeSseEvent } from '../src/protocols/transport/wire.js';

const runs = Math.max(3, Number(process.argv[2] ?? 7));
const run = (text: string) =>
  lastValueFrom(agentLoop([userMessage('go', 0)], { systemPrompt: '', messages: [], tools: [] }, { model: scriptedModel(), provider: scriptedProvider([{ text }], { chunkSize: 4 }), retry: false }).pipe(toArray()));
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sse = new EventEncoder();
const proto = new EventEncoder({ accept: 'application/vnd.ag-ui.event+proto' });
const encodeSse = (e: object) => sse.encodeSSE(e as Parameters<EventEncoder['encodeSSE']>[0]);

const reply = 'Streaming agent events to a page costs bytes linear in the reply. '.repeat(40).slice(0, 2048);
const events = await run(reply);
const agUi = await lastValueFrom(from(events).pipe(agUiEvents(), toArray()));
const sseBytes = agUi.map((e) => Buffer.byteLength(encodeSse(e))).reduce((a, b) => a + b, 0);
const protoBytes = agUi.map((e) => proto.encodeBinary(e as unknown as Parameters<EventEncoder['encodeBinary']>[0]).byteLength).reduce((a, b) => a + b, 0);
const encode = createWireEncoder();
const phiBytes = events.map((e, i) => Buffer.byteLength(encodeSseEvent(i + 1, encode(e)))).reduce((a, b) => a + b, 0);
console.log(`wire bytes, 2,048-character reply in 4-character deltas (${events.length} phi-rx events, ${agUi.length} AG-UI events):`);
console.log(`  AG-UI, SSE:      ${sseBytes} B (${(sseBytes / reply.length).toFixed(1)}x the reply)`);
console.log(`  AG-UI, protobuf: ${protoBytes} B (${(protoBytes / reply.length).toFixed(1)}x)`);
console.log(`  phi-rx wire, a frame per event: ${phiBytes} B (${(phiBytes / reply.length).toFixed(1)}x)`);

async function perDelta(n: number): Promise<{ nsPerDelta: number; eventsPerSec: number }> {
  const evs: AgentEvent[] = await run('abcd'.repeat(n));
  const times: number[] = [];
  let count = 0;
  const once = () => lastValueFrom(from(evs).pipe(agUiEvents(), map(encodeSse), toArray()));
  for (let i = 0; i < 3; i++) await once(); // warm-up
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    count = (await once()).length;
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  return { nsPerDelta: (ms * 1e6) / n, eventsPerSec: count / (ms / 1000) };
}
for (const n of [200, 2000]) {
  const { nsPerDelta, eventsPerSec } = await perDelta(n);
  console.log(`N = ${n} deltas: ${Math.round(nsPerDelta)} ns per delta, ${Math.round(eventsPerSec).toLocaleString('en')} AG-UI events/s through agUiEvents + SSE (median of ${runs})`);
}
