// SSE parsing benchmark: the same ~1 MiB recorded Anthropic stream, served on 127.0.0.1 by a
// separate process, read by
//   - phi-rx's Anthropic provider (HTTP, SSE decoding, JSON, message assembly, StreamEvents),
//   - eventsource-parser alone (the same undici request and dispatcher, TextDecoder, the parser),
//   - eventsource-parser plus JSON.parse of every event (the least any provider must do).
// Runs alternate between the readers; each run's counts are asserted.
//
//   node bench/sse.mjs <runs>
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RECORDING, buildStream } from './sse-stream.mjs';

const phi = await import(new URL('../.tmp/bench/phi-rx-sse.mjs', import.meta.url).href);
// run.mjs --baseline: an older bundle's provider is measured too, on the same bytes.
const baseline = process.env.PHI_RX_BASELINE ? await import(pathToFileURL(process.env.PHI_RX_BASELINE).href) : undefined;
const runs = Math.max(15, Number(process.argv[2] ?? 15));
const WARMUP = 10;

const stream = buildStream();
const server = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'sse-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
const { port } = JSON.parse(await firstLine(server.stdout));
const baseUrl = `http://127.0.0.1:${port}`;

const provider = phi.createAnthropicProvider({});
// A baseline bundle from before the Anthropic provider existed has none: then it is left out.
const baselineProvider = baseline?.createAnthropicProvider?.({});
const model = { id: 'claude-bench', api: 'anthropic-messages', provider: 'anthropic', baseUrl, apiKey: 'bench-key' };
const request = {
  model,
  systemPrompt: '',
  messages: [phi.userMessage('Hi')],
  tools: [],
  thinkingLevel: 'off',
  cacheConfig: { enabled: false, strategy: { kind: 'auto' } },
};

const readers = [
  { id: 'phi-rx', label: 'phi-rx Anthropic provider', read: () => readWithProvider(provider) },
  ...(baselineProvider ? [{ id: 'phi-rx-baseline', label: 'phi-rx Anthropic provider (baseline bundle)', read: () => readWithProvider(baselineProvider) }] : []),
  { id: 'parser', label: 'eventsource-parser alone', read: () => readWithParser(false) },
  { id: 'parser-json', label: 'eventsource-parser + JSON.parse', read: () => readWithParser(true) },
];

try {
  for (let i = 0; i < WARMUP; i++) for (const r of readers) check(r, await r.read());
  const times = new Map(readers.map((r) => [r.id, []]));
  const events = new Map();
  for (let i = 0; i < runs; i++) {
    // Alternate the order so that no reader always runs right after the same one.
    const order = i % 2 === 0 ? readers : [...readers].reverse();
    for (const r of order) {
      const start = performance.now();
      const result = await r.read();
      times.get(r.id).push(performance.now() - start);
      events.set(r.id, check(r, result));
    }
  }
  const results = readers.map((r) => {
    const ts = times.get(r.id);
    const medianMs = median(ts);
    return {
      id: r.id,
      label: r.label,
      medianMs,
      minMs: Math.min(...ts),
      maxMs: Math.max(...ts),
      times: ts,
      events: events.get(r.id),
      mbPerSecond: stream.bytes.length / 2 ** 20 / (medianMs / 1000),
    };
  });
  const of = (id) => results.find((r) => r.id === id).medianMs;
  process.stdout.write(
    `${JSON.stringify({
      description: `${(stream.bytes.length / 2 ** 20).toFixed(2)} MiB: ${stream.copies} copies of the content blocks of ${path.basename(
        RECORDING,
      )}, ${stream.sseEvents.toLocaleString('en-US')} SSE events, served in 16 KiB writes; medians of ${runs} runs`,
      bytes: stream.bytes.length,
      results,
      ratio: of('phi-rx') / of('parser'),
      ratioJson: of('phi-rx') / of('parser-json'),
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
    })}\n`,
  );
} finally {
  server.kill();
}

function check(reader, result) {
  if (reader.id.startsWith('phi-rx')) {
    const want = stream.textDeltas + stream.thinkingDeltas;
    if (result.deltas !== want || !result.done) throw new Error(`${reader.label}: expected ${want} deltas and a final message, got ${result.deltas} (done: ${result.done})`);
  } else if (result.events !== stream.sseEvents) {
    throw new Error(`${reader.label}: expected ${stream.sseEvents} SSE events, got ${result.events}`);
  }
  return result.events;
}

function readWithProvider(provider) {
  return new Promise((resolve, reject) => {
    let events = 0;
    let deltas = 0;
    let done = false;
    provider(request, {}).subscribe({
      next: (e) => {
        events++;
        if (e.type === 'textDelta' || e.type === 'thinkingDelta') deltas++;
        else if (e.type === 'done') done = true;
      },
      error: reject,
      complete: () => resolve({ events, deltas, done }),
    });
  });
}

/** The same request through the same dispatcher; the body straight into eventsource-parser. */
async function readWithParser(json) {
  let events = 0;
  let sink = 0;
  const parser = phi.createParser({
    onEvent: (message) => {
      events++;
      if (json) sink += JSON.parse(message.data).type.length;
    },
  });
  const response = await phi.request(`${baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': 'bench-key' },
    body: JSON.stringify({ model: model.id, messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    dispatcher: await phi.getHttpDispatcher(),
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(decoder.decode());
  return { events, sink };
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function firstLine(readable) {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: readable });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
    readable.once('error', reject);
  });
}
