/**
 * fromEventStream against a hostile or newer server, over loopback: a line that never ends or a
 * stream that never stops fails with `EventStreamError('TooLarge')` and the connection is closed;
 * an event type this client does not know is handed to `onUnknownEvent`, not emitted.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { EventStreamError, fromEventStream, type UnknownWireEvent } from '../../../src/protocols/transport/index.js';
import { filler, MiB, startFloodServer, type FloodServer } from '../../security/provider-flood-server.js';

const servers: FloodServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));
async function serve(body: () => Iterable<Uint8Array | string>): Promise<FloodServer> {
  const server = await startFloodServer(() => ({ headers: { 'content-type': 'text/event-stream' }, body }));
  servers.push(server);
  return server;
}

const frame = (id: number, data: Record<string, unknown>): string => `id: ${id}\nevent: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const start = frame(1, { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'l', timestamp: 0 });
const end = (id: number) => frame(id, { type: 'AgentEnd', loopId: 'l', messages: [], usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: 1, stopReason: 'stop' });

async function failure(url: string, options: Parameters<typeof fromEventStream>[1] = {}): Promise<EventStreamError> {
  const error = await lastValueFrom(fromEventStream(url, { retryDelayMs: 5, ...options })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(EventStreamError);
  return error as EventStreamError;
}

describe('fromEventStream limits', () => {
  it('a line past maxEventBytes fails with TooLarge, no reconnect, and the connection is closed', async () => {
    const server = await serve(function* () {
      yield start;
      yield 'event: MessageUpdate\ndata: {"type":"MessageUpdate","delta":"';
      yield* filler(400 * MiB);
    });
    const error = await failure(`${server.url}/runs/r/events`, { maxEventBytes: 1 * MiB });
    expect(error.code).toBe('TooLarge');
    expect(error.message).toMatch(/over 1048576 bytes without completing an event \(maxEventBytes\)/);
    expect(server.requests).toHaveLength(1);
    expect(await server.requests[0]!.finished).toBe('client-closed');
    expect(server.requests[0]!.bytesSent).toBeLessThan(16 * MiB);
  });

  it('at the default 8 MiB a 400 MiB line is cut after about 8 MiB', async () => {
    const server = await serve(function* () {
      yield start;
      yield 'data: "';
      yield* filler(400 * MiB);
    });
    const error = await failure(`${server.url}/runs/r/events`);
    expect(error.message).toContain(`over ${8 * MiB} bytes without completing an event`);
    expect(await server.requests[0]!.finished).toBe('client-closed');
    expect(server.requests[0]!.bytesSent).toBeLessThan(32 * MiB);
  });

  it('a stream past maxResponseBytes (heartbeats forever) fails with TooLarge and is closed', async () => {
    const server = await serve(function* () {
      yield start;
      for (;;) yield ': heartbeat\n\n'.repeat(4096);
    });
    const error = await failure(`${server.url}/runs/r/events`, { maxResponseBytes: 2 * MiB });
    expect(error.code).toBe('TooLarge');
    expect(error.message).toContain('over 2097152 bytes in all (maxResponseBytes)');
    expect(await server.requests[0]!.finished).toBe('client-closed');
  });
});

describe('fromEventStream and event types it does not know', () => {
  it('hands an unknown event to onUnknownEvent, does not emit it, and goes on to the end', async () => {
    const server = await serve(function* () {
      yield start;
      yield frame(2, { type: 'FutureEvent', loopId: 'l', detail: 42 });
      yield end(3);
    });
    const unknown: UnknownWireEvent[] = [];
    const events = await lastValueFrom(fromEventStream(`${server.url}/runs/r/events`, { onUnknownEvent: (e) => unknown.push(e) }).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['AgentStart', 'AgentEnd']);
    expect(unknown).toEqual([{ type: 'FutureEvent', id: '2', data: { type: 'FutureEvent', loopId: 'l', detail: 42 } }]);
  });

  it('drops it without onUnknownEvent', async () => {
    const server = await serve(function* () {
      yield start;
      yield frame(2, { type: 'FutureEvent' });
      yield end(3);
    });
    const events = await lastValueFrom(fromEventStream(`${server.url}/runs/r/events`).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['AgentStart', 'AgentEnd']);
  });

  it('a frame whose data has no string type is a BadFrame', async () => {
    const server = await serve(function* () {
      yield start;
      yield 'id: 2\ndata: {"kind":"x"}\n\n';
    });
    const error = await failure(`${server.url}/runs/r/events`);
    expect(error.code).toBe('BadFrame');
    expect(error.message).toContain('has no string "type"');
  });
});
