/**
 * A parallel input guardrail trips while a real OpenAI-compatible server streams slowly over
 * loopback: by the time the run hears of the trip (synchronously after it), the request's signal is
 * aborted and its socket destroyed; the server sees the socket close, and no token reaches the run
 * after the trip.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import diagnostics from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { tap } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, userMessage, type AgentEvent } from '../../src/index.js';
import { createOpenAiCompletionsProvider, openai } from '../../src/providers/index.js';
import { agentEnd, context, events } from '../agent/helpers.js';

const sse = (e: unknown): string => `data: ${JSON.stringify(e)}\n\n`;
const chunk = (content: string): unknown => ({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/** A server that streams one token every `everyMs` (up to 500), and notes when each went out and when the client's socket closed. */
async function slowServer(everyMs: number): Promise<{ url: string; sent: number[]; closedAt: Promise<number>; close(): Promise<void> }> {
  const sent: number[] = [];
  let closed: (at: number) => void = () => undefined;
  const closedAt = new Promise<number>((resolve) => (closed = resolve));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse({ ...(chunk('') as object), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }));
      const timer = setInterval(() => {
        if (sent.length >= 500) return clearInterval(timer);
        res.write(sse(chunk(`t${sent.length} `)));
        sent.push(performance.now());
      }, everyMs);
      res.on('close', () => {
        clearInterval(timer);
        closed(performance.now());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, sent, closedAt,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('a parallel input guardrail over loopback', () => {
  it('trips while the model streams: the request is aborted at the trip, the socket closes, no token after', async () => {
    const server = await slowServer(20);
    closers.push(server.close);
    const signals: AbortSignal[] = [];
    const fetching: typeof fetch = (input, init) => {
      if (init?.signal) signals.push(init.signal);
      return fetch(input, init);
    };
    const gpt = openai('gpt-4o', { baseUrl: `${server.url}/v1`, apiKey: 'sk-test' });
    // The guardrail answers once three tokens have reached the run (a slow classifier, say).
    let tokens = 0;
    let seenThree: () => void = () => undefined;
    const threeTokens = new Promise<void>((resolve) => (seenThree = resolve));
    const topic = { name: 'on-topic', check: async () => (await threeTokens, { tripwire: true, info: { category: 'homework' } }) };

    let trippedAt = 0;
    let destroyedAtTrip: boolean | undefined;
    const sockets: Socket[] = [];
    const connected = (m: unknown): void => void sockets.push((m as { socket: Socket }).socket);
    diagnostics.subscribe('undici:client:connected', connected);
    let abortedAtTrip: boolean | undefined;
    const after: string[] = [];
    const all: AgentEvent[] = await events(
      agentLoop([userMessage('Solve my maths homework', 0)], context([]), {
        model: gpt, provider: createOpenAiCompletionsProvider({ fetch: fetching }), retry: false,
        guardrails: { input: [topic] },
      }).pipe(tap((e) => {
        if (e.type === 'MessageUpdate' && ++tokens === 3) seenThree();
        if (trippedAt > 0 && e.type === 'MessageUpdate') after.push(e.type);
        if (e.type === 'GuardrailTripped') {
          trippedAt = performance.now();
          destroyedAtTrip = sockets[0]?.destroyed; // the connection, closed by then
          abortedAtTrip = signals[0]?.aborted; // synchronously: the request was cut before the run heard of the trip
        }
      })),
    );

    diagnostics.unsubscribe('undici:client:connected', connected);
    expect(signals).toHaveLength(1);
    expect(sockets).toHaveLength(1);
    expect(abortedAtTrip).toBe(true);
    expect(destroyedAtTrip).toBe(true);
    expect(after).toEqual([]); // no token after the trip
    const closedAt = await server.closedAt;
    // The server, in this same process, hears of it when its event loop next polls the socket.
    console.log(`guardrail trip → server sees the socket close: ${(closedAt - trippedAt).toFixed(2)} ms`);

    const tripped = all.find((e) => e.type === 'GuardrailTripped');
    expect(tripped).toMatchObject({ guardrail: 'on-topic', kind: 'input', info: { category: 'homework' }, turnIndex: 0 });
    const end = agentEnd(all);
    expect(end).toMatchObject({ stopReason: 'guardRail', stoppedBy: { kind: 'guardrail', guardrail: 'on-topic', stage: 'input', info: { category: 'homework' } } });
    expect(end.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'guardRail', content: [{ type: 'text', text: '[Stopped by guardrail: on-topic]' }] });
    // The streamed message was closed by the stop message: one MessageStart, one MessageEnd.
    expect(all.filter((e) => e.type === 'MessageStart' && e.message.role === 'assistant')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'MessageEnd' && e.message.role === 'assistant')).toHaveLength(1);
  }, 30_000);
});
