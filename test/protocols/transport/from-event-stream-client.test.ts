/**
 * fromEventStream's own decisions, against a scripted `fetch` whose responses are real `Response`s with
 * streamed bodies chunked as the test says: when it reconnects and when it gives up, what ends a run (the
 * root AgentEnd, the end frame, not a sub-agent's AgentEnd), bytes split anywhere, unsubscribing at any
 * point, and every kind of bad frame or response.
 */
import { lastValueFrom, toArray, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../../src/index.js';
import { EventStreamError, fromEventStream, type FromEventStreamOptions } from '../../../src/protocols/transport/index.js';

type Chunk = string | Uint8Array;
/** One connection: the chunks it sends, then it closes cleanly (or stays open with `hang`). */
interface Connection {
  chunks: readonly Chunk[];
  hang?: boolean;
  status?: number;
}

/** A scripted server: the n-th request gets connections[n] (the last one repeats). */
function scripted(...connections: Connection[]) {
  const requests: { lastEventId: string | null; signal: AbortSignal }[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const connection = connections[Math.min(requests.length, connections.length - 1)]!;
    requests.push({ lastEventId: new Headers(init?.headers).get('last-event-id'), signal: init!.signal! });
    return respond(connection);
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

function respond({ chunks, hang = false, status = 200 }: Connection): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);
      if (!hang) controller.close();
    },
  });
  return new Response(body, { status, headers: { 'content-type': 'text/event-stream' } });
}

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
const frame = (id: number | undefined, data: Record<string, unknown>): string =>
  `${id === undefined ? '' : `id: ${id}\n`}event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const agentStart = (id: number, loopId = 'l', agentId = 'a') => frame(id, { type: 'AgentStart', agentId, sessionId: 's', loopId, timestamp: 0 });
const turnStart = (id: number, loopId = 'l') => frame(id, { type: 'TurnStart', loopId, turn: 1, timestamp: 0 });
const agentEnd = (id: number, loopId = 'l') => frame(id, { type: 'AgentEnd', loopId, messages: [], usage, timestamp: 1, stopReason: 'stop' });

const url = 'http://phi-rx.test/runs/r/events';
const run = (server: ReturnType<typeof scripted>, options: FromEventStreamOptions = {}) =>
  lastValueFrom(fromEventStream(url, { fetch: server.fetch, retryDelayMs: 0, ...options }).pipe(toArray()));
const failure = (server: ReturnType<typeof scripted>, options: FromEventStreamOptions = {}) =>
  run(server, options).then(
    () => {
      throw new Error('completed');
    },
    (e: unknown) => {
      expect(e).toBeInstanceOf(EventStreamError);
      return e as EventStreamError;
    },
  );
const types = (events: AgentEvent[]) => events.map((e) => e.type);

describe('fromEventStream: reconnecting and giving up', () => {
  it('gives up after exactly maxReconnects reconnects that bring no new event', async () => {
    const server = scripted({ chunks: [agentStart(1)] }, { chunks: [] });
    const error = await failure(server, { maxReconnects: 2 });
    expect(error.code).toBe('Disconnected');
    expect(error.message).toBe(`event stream ${url}: gave up after 2 reconnects with no new event`);
    expect(error.cause).toBeInstanceOf(EventStreamError);
    expect(server.requests.map((r) => r.lastEventId)).toEqual([null, '1', '1']);
  });

  it('gives up after 5 fruitless reconnects by default', async () => {
    const server = scripted({ chunks: [agentStart(1)] }, { chunks: [] });
    expect((await failure(server)).message).toContain('gave up after 5 reconnects');
    expect(server.requests).toHaveLength(6);
  });

  it('a reconnect that brings a new event starts the count afresh', async () => {
    const server = scripted({ chunks: [agentStart(1)] }, { chunks: [turnStart(2)] }, { chunks: [turnStart(3)] }, { chunks: [] });
    await failure(server, { maxReconnects: 1 });
    expect(server.requests.map((r) => r.lastEventId)).toEqual([null, '1', '2', '3']);
  });

  it('a server that closes the stream cleanly mid-run is reconnected to, after Last-Event-ID, and the run goes on', async () => {
    const server = scripted({ chunks: [agentStart(1), turnStart(2)] }, { chunks: [agentEnd(3)] });
    const events = await run(server, { maxReconnects: 1 });
    expect(types(events)).toEqual(['AgentStart', 'TurnStart', 'AgentEnd']);
    expect(server.requests.map((r) => r.lastEventId)).toEqual([null, '2']);
  });

  it('resumes after options.lastEventId on the first connection, and waits retryDelayMs (or the server retry:) between connections', async () => {
    const clock = new VirtualTimeScheduler();
    const server = scripted({ chunks: ['retry: 250\n\n', turnStart(8)] }, { chunks: [agentEnd(9)] });
    const done = run(server, { lastEventId: '7', scheduler: clock, retryDelayMs: 1_000 });
    await until(() => clock.actions.length > 0);
    expect(clock.actions[0]!.delay).toBe(250);
    clock.flush();
    await done;
    expect(server.requests.map((r) => r.lastEventId)).toEqual(['7', '8']);
  });

  it('a Response passed in that drops cannot be reconnected to without a url', async () => {
    const error = await lastValueFrom(fromEventStream(respond({ chunks: [agentStart(1)] }), { retryDelayMs: 0 }).pipe(toArray())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventStreamError);
    expect(error).toMatchObject({ code: 'Disconnected', message: 'event stream: the connection dropped and the Response has no url to reconnect to' });
  });
});

describe('fromEventStream: what ends the run', () => {
  it('completes on the root AgentEnd, not on a sub-agent AgentEnd inside the run', async () => {
    const server = scripted({
      chunks: [agentStart(1), agentStart(2, 'l/sub', 'helper'), agentEnd(3, 'l/sub'), turnStart(4), agentEnd(5), turnStart(6)],
      hang: true,
    });
    const events = await run(server);
    expect(events.map((e) => `${e.type} ${'loopId' in e ? e.loopId : ''}`)).toEqual(['AgentStart l', 'AgentStart l/sub', 'AgentEnd l/sub', 'TurnStart l', 'AgentEnd l']);
    expect(server.requests[0]!.signal.aborted).toBe(true);
  });

  it('without an AgentStart seen (joined mid-run), the first AgentEnd ends it', async () => {
    const server = scripted({ chunks: [turnStart(4), agentEnd(5, 'l'), turnStart(6)], hang: true });
    expect(types(await run(server))).toEqual(['TurnStart', 'AgentEnd']);
  });

  it('completes on the end frame and closes the connection, reading nothing after it', async () => {
    const server = scripted({ chunks: [agentStart(1), 'event: phi-rx:end\ndata: {}\n\n', 'data: not json\n\n'], hang: true });
    expect(types(await run(server))).toEqual(['AgentStart']);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.signal.aborted).toBe(true);
  });
});

describe('fromEventStream: bytes split anywhere', () => {
  it('a multi-byte character split across two chunks arrives whole', async () => {
    const bytes = new TextEncoder().encode(agentStart(1, 'l', 'agent-🦊-é'));
    const cut = bytes.indexOf(0xf0) + 2; // inside the fox's four bytes
    const server = scripted({ chunks: [bytes.slice(0, cut), bytes.slice(cut), agentEnd(2)] });
    const [start] = await run(server);
    expect(start).toMatchObject({ type: 'AgentStart', agentId: 'agent-🦊-é' });
  });

  it('a frame split in the middle of a line, one byte a chunk, arrives whole', async () => {
    const bytes = new TextEncoder().encode(agentStart(1) + agentEnd(2));
    const server = scripted({ chunks: [...bytes].map((b) => Uint8Array.of(b)) });
    expect(types(await run(server))).toEqual(['AgentStart', 'AgentEnd']);
  });
});

describe('fromEventStream: unsubscribing', () => {
  it('while idle between connections, no reconnect follows', async () => {
    const clock = new VirtualTimeScheduler();
    const server = scripted({ chunks: [agentStart(1)] }, { chunks: [agentEnd(2)] });
    const seen: string[] = [];
    const subscription = fromEventStream(url, { fetch: server.fetch, scheduler: clock, retryDelayMs: 100 }).subscribe({
      next: (e) => seen.push(e.type),
      error: () => seen.push('error'),
      complete: () => seen.push('complete'),
    });
    await until(() => clock.actions.length > 0);
    subscription.unsubscribe();
    clock.flush();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.requests).toHaveLength(1);
    expect(seen).toEqual(['AgentStart']);
  });

  it('while a connection is open, it is closed', async () => {
    const server = scripted({ chunks: [agentStart(1)], hang: true });
    const seen: string[] = [];
    const subscription = fromEventStream(url, { fetch: server.fetch }).subscribe((e) => seen.push(e.type));
    await until(() => seen.length === 1);
    expect(server.requests[0]!.signal.aborted).toBe(false);
    subscription.unsubscribe();
    expect(server.requests[0]!.signal.aborted).toBe(true);
  });
});

describe('fromEventStream: size limits', () => {
  it('a line longer than maxEventBytes fails with TooLarge and closes the connection; a comment or an event resets the count', async () => {
    const ok = scripted({ chunks: [': ' + 'h'.repeat(90) + '\n\n', ': ' + 'h'.repeat(90) + '\n\n', agentEnd(1)] });
    expect(types(await run(ok, { maxEventBytes: 100 }))).toEqual(['AgentEnd']);
    const server = scripted({ chunks: [agentStart(1), 'data: "' + 'x'.repeat(60), 'x'.repeat(60)], hang: true });
    const error = await failure(server, { maxEventBytes: 100 });
    expect(error).toMatchObject({ code: 'TooLarge', message: `event stream ${url}: the server sent over 100 bytes without completing an event (maxEventBytes); the connection was closed` });
    expect(server.requests[0]!.signal.aborted).toBe(true);
  });

  it('a stream longer than maxResponseBytes over every connection fails with TooLarge', async () => {
    const heartbeats = ': beat\n\n'.repeat(10); // 80 bytes
    const server = scripted({ chunks: [agentStart(1), heartbeats] }, { chunks: [turnStart(2), heartbeats] });
    const bytes = new TextEncoder().encode(agentStart(1) + heartbeats).byteLength;
    const error = await failure(server, { maxResponseBytes: bytes + 10 });
    expect(error).toMatchObject({ code: 'TooLarge', message: `event stream ${url}: the server sent over ${bytes + 10} bytes in all (maxResponseBytes); the connection was closed` });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.signal.aborted).toBe(true);
  });

  it('by default at most 8 MiB without an event and 256 MiB in all', async () => {
    const MiB = 1024 * 1024;
    const line = await failure(scripted({ chunks: ['data: "', new Uint8Array(8 * MiB)], hang: true }));
    expect(line.message).toContain(`over ${8 * MiB} bytes without completing an event`);
    // A chunk is counted before it is decoded: one of 256 MiB + 1 zero bytes is refused as it arrives.
    const all = await failure(scripted({ chunks: [new Uint8Array(256 * MiB + 1)], hang: true }));
    expect(all.message).toContain(`over ${256 * MiB} bytes in all`);
  });
});

describe('fromEventStream: bad frames and responses', () => {
  it('malformed JSON is a BadFrame naming the event', async () => {
    const error = await failure(scripted({ chunks: [agentStart(1), 'id: 2\nevent: TurnStart\ndata: {"type":\n\n'], hang: true }));
    expect(error.code).toBe('BadFrame');
    expect(error.message).toMatch(new RegExp(`^event stream ${url}: event 2 \\(TurnStart\\) has malformed JSON data: `));
  });

  it('an unnamed frame without id is named "?" and "message"', async () => {
    const error = await failure(scripted({ chunks: ['data: [1]\n\n'], hang: true }));
    expect(error.message).toBe(`event stream ${url}: event ? (message) has no string "type"`);
  });

  it('data that is not an object, or null, has no string type', async () => {
    for (const data of ['null', '"AgentStart"', '{"type":7}']) {
      const error = await failure(scripted({ chunks: [`id: 3\nevent: X\ndata: ${data}\n\n`], hang: true }));
      expect(error.message).toBe(`event stream ${url}: event 3 (X) has no string "type"`);
    }
  });

  it('an event the client cannot rebuild is a BadFrame saying why', async () => {
    const update = frame(2, { type: 'MessageUpdate', loopId: 'l', delta: { type: 'text', index: 0, delta: 'x' }, timestamp: 0 });
    const error = await failure(scripted({ chunks: [agentStart(1), update], hang: true }));
    expect(error.code).toBe('BadFrame');
    expect(error.message).toBe(`event stream ${url}: event 2 (MessageUpdate): MessageUpdate for loop l arrived before its MessageStart`);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('an error frame fails the stream with its code and message, without reconnecting', async () => {
    const server = scripted({ chunks: [agentStart(1), 'event: phi-rx:error\ndata: {"code":"ResumeGap","message":"events before 1 are gone"}\n\n'] });
    const error = await failure(server);
    expect(error.code).toBe('ResumeGap');
    expect(error.message).toBe(`event stream ${url}: events before 1 are gone`);
    expect(server.requests).toHaveLength(1);
  });

  it('a non-2xx response fails with Http, its status and the error the body gives, without reconnecting', async () => {
    const server = scripted({ chunks: ['{"error":"no such run"}'], status: 404 });
    const error = await failure(server);
    expect(error.code).toBe('Http');
    expect(error.message).toBe(`event stream ${url}: HTTP 404: no such run`);
    expect(server.requests).toHaveLength(1);
    const bare = await failure(scripted({ chunks: [], status: 503 }));
    expect(bare.message).toBe(`event stream ${url}: HTTP 503`);
  });

  it('a response without a body fails with Http', async () => {
    const fetch = (async () => new Response(null, { status: 200 })) as typeof globalThis.fetch;
    const error = await lastValueFrom(fromEventStream(url, { fetch })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'Http', message: `event stream ${url}: the response has no body` });
  });

  it('a fetch that throws is a dropped connection: retried, then given up with it as the cause', async () => {
    const cause = new TypeError('fetch failed');
    let calls = 0;
    const fetch = (async () => {
      calls++;
      throw cause;
    }) as typeof globalThis.fetch;
    const error = await lastValueFrom(fromEventStream(url, { fetch, retryDelayMs: 0, maxReconnects: 1 })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'Disconnected', cause });
    expect(calls).toBe(2);
  });

  it('sends accept, the caller headers and no Last-Event-ID on a fresh start', async () => {
    let headers: Headers | undefined;
    const fetch = (async (_: unknown, init?: RequestInit) => {
      headers = new Headers(init?.headers);
      return respond({ chunks: [agentEnd(1)] });
    }) as typeof globalThis.fetch;
    await lastValueFrom(fromEventStream(new URL(url), { fetch, headers: { authorization: 'Bearer t' } }));
    expect([headers!.get('accept'), headers!.get('authorization'), headers!.get('last-event-id')]).toEqual(['text/event-stream', 'Bearer t', null]);
  });
});

/** Waits (in real time) until `check` holds. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(check()).toBe(true);
}
