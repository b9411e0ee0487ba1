/**
 * fromEventStream, more of its own decisions against a scripted `fetch` whose bodies close or fail as a real one
 * does when its request is aborted: the default reconnect delay, the Last-Event-ID kept across frames without an id,
 * no reconnect once unsubscribed, and a body cancelled when the client gives up on it.
 */
import { lastValueFrom, toArray, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromEventStream } from '../../../src/protocols/transport/index.js';

const url = 'http://phi-rx.test/runs/r/events';
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
const json = (data: Record<string, unknown>) => JSON.stringify(data);
const start = `id: 1\nevent: AgentStart\ndata: ${json({ type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'l', timestamp: 0 })}\n\n`;
const turnWithoutId = `event: TurnStart\ndata: ${json({ type: 'TurnStart', loopId: 'l', turn: 1, timestamp: 0 })}\n\n`;
const end = `id: 3\nevent: AgentEnd\ndata: ${json({ type: 'AgentEnd', loopId: 'l', messages: [], usage, timestamp: 1, stopReason: 'stop' })}\n\n`;

/** The n-th request gets bodies[n] (the last repeats); `open` keeps it open until the request is aborted. */
function server(...bodies: { chunks: string[]; open?: boolean }[]) {
  const requests: { lastEventId: string | null; cancelled: boolean }[] = [];
  const fetch = (async (_: unknown, init?: RequestInit) => {
    const body = bodies[Math.min(requests.length, bodies.length - 1)]!;
    const request = { lastEventId: new Headers(init?.headers).get('last-event-id'), cancelled: false };
    requests.push(request);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of body.chunks) controller.enqueue(new TextEncoder().encode(chunk));
        if (!body.open) controller.close();
        init?.signal?.addEventListener('abort', () => controller.error(new DOMException('The operation was aborted.', 'AbortError')));
      },
      cancel() {
        request.cancelled = true;
      },
    });
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
  }) as typeof globalThis.fetch;
  return { fetch, requests };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(check()).toBe(true);
}

describe('fromEventStream: resuming', () => {
  it('waits 500 ms before reconnecting by default', async () => {
    const clock = new VirtualTimeScheduler();
    const s = server({ chunks: [start] }, { chunks: [end] });
    const done = lastValueFrom(fromEventStream(url, { fetch: s.fetch, scheduler: clock }).pipe(toArray()));
    await until(() => clock.actions.length > 0);
    expect(clock.actions[0]!.delay).toBe(500);
    clock.flush();
    expect((await done).map((e) => e.type)).toEqual(['AgentStart', 'AgentEnd']);
  });

  it('keeps the last event id across frames that carry none', async () => {
    const s = server({ chunks: [start, turnWithoutId] }, { chunks: [end] });
    await lastValueFrom(fromEventStream(url, { fetch: s.fetch, retryDelayMs: 0 }).pipe(toArray()));
    expect(s.requests.map((r) => r.lastEventId)).toEqual([null, '1']);
  });

  it('once unsubscribed while reading, the aborted read does not lead to a reconnect', async () => {
    const s = server({ chunks: [start], open: true });
    const seen: string[] = [];
    const subscription = fromEventStream(url, { fetch: s.fetch, retryDelayMs: 0 }).subscribe({ next: (e) => seen.push(e.type), error: () => seen.push('error') });
    await until(() => seen.length === 1);
    subscription.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.requests).toHaveLength(1);
    expect(seen).toEqual(['AgentStart']);
  });

  it('cancels the body of a Response passed in when it gives up on it (it cannot abort its request)', async () => {
    const s = server({ chunks: [start, 'data: "' + 'x'.repeat(200)], open: true });
    const response = await s.fetch(url);
    const error = await lastValueFrom(fromEventStream(response, { maxEventBytes: 100 })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TooLarge' });
    await until(() => s.requests[0]!.cancelled);
  });

  it('a Response passed in that drops gives up with the drop as the cause', async () => {
    const s = server({ chunks: [start] });
    const error = await lastValueFrom(fromEventStream(await s.fetch(url))).catch((e: unknown) => e);
    // A Response made by a scripted fetch has no url either.
    expect(error).toMatchObject({ code: 'Disconnected', cause: expect.objectContaining({ code: 'Disconnected' }) });
  });
});

describe('fromEventStream: edges', () => {
  it('joined mid-run on a sub-agent event, it still ends on the run AgentEnd', async () => {
    const sub = `event: TurnStart\ndata: ${json({ type: 'TurnStart', loopId: 'l/sub', turn: 1, timestamp: 0 })}\n\n`;
    const s = server({ chunks: [sub, end] });
    const events = await lastValueFrom(fromEventStream(url, { fetch: s.fetch, maxReconnects: 0 }).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['TurnStart', 'AgentEnd']);
  });

  it('exactly maxEventBytes without an event, or maxResponseBytes in all, is still allowed', async () => {
    const bytes = new TextEncoder().encode(start).byteLength;
    const s = server({ chunks: [start, end] });
    const events = await lastValueFrom(fromEventStream(url, { fetch: s.fetch, maxEventBytes: bytes, maxResponseBytes: bytes + new TextEncoder().encode(end).byteLength }).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['AgentStart', 'AgentEnd']);
  });

  it('hands an unknown event to onUnknownEvent and goes on', async () => {
    const unknown: unknown[] = [];
    const s = server({ chunks: [start, `id: 2\nevent: Future\ndata: ${json({ type: 'Future', x: 1 })}\n\n`, end] });
    const events = await lastValueFrom(fromEventStream(url, { fetch: s.fetch, onUnknownEvent: (e) => unknown.push(e) }).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['AgentStart', 'AgentEnd']);
    expect(unknown).toEqual([{ type: 'Future', id: '2', data: { type: 'Future', x: 1 } }]);
    const quiet = server({ chunks: [start, `data: ${json({ type: 'Future' })}\n\n`, end] });
    expect((await lastValueFrom(fromEventStream(url, { fetch: quiet.fetch }).pipe(toArray()))).map((e) => e.type)).toEqual(['AgentStart', 'AgentEnd']);
  });

  it('names a frame without id or event name "?" and "message" when it cannot be read or rebuilt', async () => {
    const bad = server({ chunks: ['data: {oops\n\n'], open: true });
    const error = await lastValueFrom(fromEventStream(url, { fetch: bad.fetch })).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/: event \? \(message\) has malformed JSON data: /);
    const update = server({ chunks: [`data: ${json({ type: 'MessageUpdate', loopId: 'l', delta: { type: 'text', index: 0, delta: 'x' }, timestamp: 0 })}\n\n`], open: true });
    const unbuilt = await lastValueFrom(fromEventStream(url, { fetch: update.fetch })).catch((e: unknown) => e);
    expect((unbuilt as Error).message).toBe(`event stream ${url}: event ? (message): MessageUpdate for loop l arrived before its MessageStart`);
  });
});
