import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VirtualTimeScheduler, firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { Agent } from 'undici';
import { httpStream } from '../../../src/sources/http/request.js';
import { ProviderError } from '../../../src/types/errors.js';
import { startFixtureServer } from '../../providers/fixture-server.js';
import type { FixtureServer } from '../../providers/fixture-server.js';

let server: FixtureServer;
let dispatcher: Agent;

beforeAll(async () => {
  server = await startFixtureServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  await dispatcher?.close();
});

function stream(options: Partial<Parameters<typeof httpStream>[2]> = {}, path = '/v1/x') {
  dispatcher = new Agent();
  return httpStream(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":1}' }, {
    provider: 'test',
    dispatcher,
    ...options,
  });
}

async function failure(source: ReturnType<typeof stream>): Promise<ProviderError> {
  try {
    await lastValueFrom(source);
  } catch (e) {
    expect(e).toBeInstanceOf(ProviderError);
    return e as ProviderError;
  }
  throw new Error('expected the stream to fail');
}

const decode = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString('utf8');

describe('httpStream', () => {
  it('is cold: nothing is sent until subscription', async () => {
    const before = server.requests.length;
    const source = stream();
    await new Promise((r) => setTimeout(r, 20));
    expect(server.requests.length).toBe(before);
    server.enqueue({ body: 'ok' });
    await lastValueFrom(source);
    expect(server.requests.length).toBe(before + 1);
  });

  it('emits the body in chunks, bytes intact across UTF-8 splits, and sends the request', async () => {
    const body = 'data: {"t":"Olá — ünïcödé ✓ 🎉"}\n\n'.repeat(20);
    server.enqueue({ body, chunking: { maxChunk: 7, seed: 3 } });
    const chunks = await lastValueFrom(stream().pipe(toArray()));
    expect(chunks.length).toBeGreaterThan(1);
    expect(decode(chunks)).toBe(body);
    const recorded = server.requests.at(-1)!;
    expect(recorded.method).toBe('POST');
    expect(recorded.json()).toEqual({ q: 1 });
  });

  it('429 with retry-after fails with rateLimited and retryAfterMs', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '3' }, body: '{"error":{"message":"Rate limited"}}' });
    const e = await failure(stream());
    expect(e.kind).toBe('rateLimited');
    expect(e.retryAfterMs).toBe(3000);
    expect(e.status).toBe(429);
    expect(e.message).toContain('Rate limited');
  });

  it('500 is network, 401 auth, 400 overflow contextOverflow', async () => {
    server.enqueue(
      { status: 500, body: '{"error":{"message":"boom"}}' },
      { status: 401, body: '{"error":{"message":"bad key"}}' },
      { status: 400, body: '{"error":{"message":"maximum context length is 128000 tokens"}}' },
    );
    expect((await failure(stream())).kind).toBe('network');
    expect((await failure(stream())).kind).toBe('auth');
    expect((await failure(stream())).kind).toBe('contextOverflow');
  });

  it('a connection reset mid-body fails with network', async () => {
    server.enqueue({ body: 'x'.repeat(4000), fault: { kind: 'reset', afterBytes: 100 } });
    const e = await failure(stream());
    expect(e.kind).toBe('network');
    expect(e.retryable).toBe(true);
  });

  it('a refused connection fails with network', async () => {
    dispatcher = new Agent();
    const e = await failure(httpStream('http://127.0.0.1:1/x', { body: '{}' }, { provider: 'test', dispatcher }));
    expect(e.kind).toBe('network');
    expect(e.message).toMatch(/ECONNREFUSED/);
  });

  it('a stalled body fails with network after the idle timeout (virtual time)', async () => {
    const scheduler = new VirtualTimeScheduler();
    server.enqueue({ body: 'abc'.repeat(100), fault: { kind: 'stall', afterBytes: 10 } });
    const source = stream({ scheduler, idleTimeoutMs: 5_000 });
    const errored = failure(source);
    while (server.requests.at(-1)?.bytesSent !== 10) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20)); // let the bytes reach the client
    scheduler.flush();
    const e = await errored;
    expect(e.kind).toBe('network');
    expect(e.message).toMatch(/stalled: no data for 5000 ms/);
    expect(await server.requests.at(-1)!.finished).toBe('aborted');
  });

  it('no response within requestTimeoutMs fails with network (virtual time)', async () => {
    const scheduler = new VirtualTimeScheduler();
    server.enqueue({ body: 'never', fault: { kind: 'stall', afterBytes: 0 } });
    const before = server.requests.length;
    const errored = failure(stream({ scheduler, requestTimeoutMs: 1_000 }));
    while (server.requests.length === before) await new Promise((r) => setTimeout(r, 5));
    scheduler.flush();
    const e = await errored;
    expect(e.kind).toBe('network');
    expect(e.message).toMatch(/timed out/);
  });

  it('unsubscribing aborts the request and the server sees the socket close', async () => {
    server.enqueue({ body: 'y'.repeat(50_000), delayMs: 2, chunking: { maxChunk: 100 } });
    const first = await firstValueFrom(stream().pipe(take(1)));
    expect(first.length).toBeGreaterThan(0);
    const recorded = server.requests.at(-1)!;
    expect(await recorded.finished).toBe('aborted');
    await recorded.socketClosed;
  });

  it('an aborted signal fails with cancelled', async () => {
    server.enqueue({ body: 'z'.repeat(50_000), delayMs: 2, chunking: { maxChunk: 100 } });
    const controller = new AbortController();
    const source = stream({ signal: controller.signal });
    const errored = failure(source);
    while (server.requests.at(-1)?.bytesSent === 0 || server.requests.at(-1)?.body !== '{"q":1}') await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const e = await errored;
    expect(e.kind).toBe('cancelled');
  });
});

describe('httpStream over standard fetch (browsers, Deno, Bun, workers)', () => {
  let own: FixtureServer;
  beforeAll(async () => {
    own = await startFixtureServer();
  });
  afterAll(async () => {
    await own.close();
  });
  const viaFetch = (calls: string[]) => {
    dispatcher = new Agent(); // unused by fetch; the file's afterEach closes it
    return httpStream(`${own.url}/v1/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":2}' }, {
      provider: 'test',
      fetch: (input, init) => {
        calls.push(String(input));
        return globalThis.fetch(input, init);
      },
    });
  };

  it('reads the body from a web ReadableStream, bytes intact across UTF-8 splits', async () => {
    const body = 'data: {"t":"Olá — ✓ 🎉"}\n\n'.repeat(20);
    own.enqueue({ body, chunking: { maxChunk: 7, seed: 5 } });
    const calls: string[] = [];
    const chunks = await lastValueFrom(viaFetch(calls).pipe(toArray()));
    expect(calls).toEqual([`${own.url}/v1/x`]);
    expect(decode(chunks)).toBe(body);
    expect(own.requests.at(-1)!.json()).toEqual({ q: 2 });
  });

  it('classifies a non-2xx response from fetch headers (429 with retry-after)', async () => {
    own.enqueue({ status: 429, headers: { 'retry-after': '2' }, body: '{"error":{"message":"slow down"}}' });
    const e = await failure(viaFetch([]));
    expect(e.kind).toBe('rateLimited');
    expect(e.retryAfterMs).toBe(2000);
    expect(e.message).toContain('slow down');
  });
});
