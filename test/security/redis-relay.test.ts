import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'redis';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicAgent } from '../../src/index.js';
import { appendToStream, readRunControl, RedisEventRelay, type RedisEventRelayOptions, type RedisReader } from '../../src/redis/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { fromEventStream } from '../../src/transport/index.js';
import { missingServer, startRedis, type RunningServer } from '../support/servers.js';

const missing = missingServer('redis');

describe.skipIf(missing !== undefined)('RedisEventRelay on a network, against a real redis-server', () => {
  let redis: RunningServer;
  const closers: Array<() => Promise<unknown>> = [];
  let runs = 0;

  const connect = async (): Promise<RedisReader & { sendCommand(args: string[]): Promise<unknown> }> => {
    const client = await createClient({ url: redis.url }).connect();
    closers.push(() => client.close());
    return client;
  };

  /** A web process: a relay on a loopback server; `opened` counts the reader connections it asked for. */
  async function startWeb(options: Partial<RedisEventRelayOptions> = {}) {
    const state = { url: '', opened: 0, relay: undefined as unknown as RedisEventRelay };
    state.relay = new RedisEventRelay(await connect(), () => {
      state.opened++;
      return connect();
    }, { authorize: 'allow-all', blockMs: 100, retryMs: 20, ...options });
    const server: Server = createServer((req, res) => void (state.relay.handle(req, res) || res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    closers.push(async () => {
      await state.relay.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    return state;
  }

  const post = (url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await redis?.stop();
  });

  it('cannot be constructed without authorize; asks it before events and commands', async () => {
    const client = await connect();
    expect(() => new RedisEventRelay(client, connect, {} as never)).toThrow(/new RedisEventRelay: options\.authorize is required/);
    const web = await startWeb({ authorize: (req, { action }) => action === 'events' || req.headers.authorization === 'Bearer ok' });
    const run = `s${++runs}`;
    await client.sendCommand(['XADD', `run:${run}`, '*', 'seq', '1', 'kind', 'event', 'data', '{"type":"AgentStart"}']);
    expect((await post(`${web.url}/runs/${run}/commands`, { type: 'abort' })).status).toBe(403);
    expect(await client.sendCommand(['EXISTS', `run:${run}:control`])).toBe(0);
    expect((await post(`${web.url}/runs/${run}/commands`, { type: 'abort' }, { 'content-type': 'application/json', authorization: 'Bearer ok' })).status).toBe(202);
  });

  it('a command for a run whose stream does not exist gets 404 and writes no key', async () => {
    const web = await startWeb();
    const client = await connect();
    const before = await client.sendCommand(['DBSIZE']);
    for (let i = 0; i < 50; i++) {
      const response = await post(`${web.url}/runs/never-${i}/commands`, { type: 'steer', text: 'hi' });
      expect(response.status).toBe(404);
      expect((await response.json()) as unknown).toEqual({ error: `no run "never-${i}": its stream run:never-${i} does not exist` });
    }
    expect(await client.sendCommand(['DBSIZE'])).toBe(before);
  });

  it('control streams expire (controlTtlMs), and the worker reading them keeps them alive', async () => {
    const web = await startWeb({ controlTtlMs: 60_000 });
    const client = await connect();
    const run = `s${++runs}`;
    await client.sendCommand(['XADD', `run:${run}`, '*', 'seq', '1', 'kind', 'event', 'data', '{"type":"AgentStart"}']);
    expect((await post(`${web.url}/runs/${run}/commands`, { type: 'steer', text: 'metric units' })).status).toBe(202);
    const ttl = Number(await client.sendCommand(['PTTL', `run:${run}:control`]));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // the worker's reader renews it to its own ttl while it reads
    const reader = await connect();
    const kinds: string[] = [];
    const reading = readRunControl(reader, `run:${run}`, { blockMs: 50, ttlMs: 3_600_000 }).subscribe(({ control }) => kinds.push(control.kind));
    while (kinds.length === 0) await new Promise((r) => setTimeout(r, 10));
    reading.unsubscribe();
    expect(kinds).toEqual(['steer']);
    expect(Number(await client.sendCommand(['PTTL', `run:${run}:control`]))).toBeGreaterThan(3_000_000);
  }, 15_000);

  it('the blocking reads of many clients share a bounded pool of Redis connections', async () => {
    const web = await startWeb({ readers: 2 });
    const worker = await connect();
    const ids = Array.from({ length: 12 }, () => `p${++runs}`);
    const watched = ids.map((id) => lastValueFrom(fromEventStream(`${web.url}/runs/${id}/events`).pipe(toArray())));
    await new Promise((r) => setTimeout(r, 200)); // every client connected and waiting before its run starts
    const agents = ids.map((id, i) =>
      lastValueFrom(new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([{ text: `answer ${i}`, chunkDelay: 1 }]), retry: false }).prompt('hi').pipe(appendToStream(worker, `run:${id}`))),
    );
    await Promise.all(agents);
    const all = await Promise.all(watched);
    all.forEach((events, i) => {
      expect(events.at(-1)!.type).toBe('AgentEnd');
      expect(JSON.stringify(events.at(-1))).toContain(`answer ${i}`);
    });
    expect(web.opened).toBeLessThanOrEqual(2);
  }, 30_000);

  it('hostile requests: an undecodable id 400, text/plain 415, a 64 KiB + 1 body 413, a bad Last-Event-ID 400', async () => {
    const web = await startWeb();
    expect((await fetch(`${web.url}/runs/%E0%A4%A/events`)).status).toBe(400);
    expect((await post(`${web.url}/runs/x/commands`, '{"type":"abort"}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(`${web.url}/runs/x/commands`, 'x'.repeat(64 * 1024 + 1))).status).toBe(413);
    expect((await fetch(`${web.url}/runs/x/events`, { headers: { 'last-event-id': '0x10' } })).status).toBe(400);
    expect((await fetch(`${web.url}/runs/x/events`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
  });
});
