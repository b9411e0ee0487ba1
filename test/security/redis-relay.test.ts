import { createServer, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { createClient } from 'redis';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicAgent } from '../../src/index.js';
import { appendToStream, readRunControl, RedisEventRelay, type RedisEventRelayOptions, type RedisReader } from '../../src/integrations/redis/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { fromEventStream } from '../../src/protocols/transport/index.js';
import { missingServer, startRedis, type RunningServer } from '../support/servers.js';

const missing = missingServer('redis');

/** The stream entries in an XREAD reply, whatever its shape (RESP2 arrays, RESP3 maps): the `data` fields of events. */
function entriesIn(reply: unknown): number {
  if (typeof reply === 'string') return reply.startsWith('{"type":') ? 1 : 0;
  if (Array.isArray(reply)) return reply.reduce((n: number, r) => n + entriesIn(r), 0);
  if (reply instanceof Map) return [...reply.values()].reduce((n: number, r) => n + entriesIn(r), 0);
  if (reply && typeof reply === 'object') return Object.values(reply).reduce((n: number, r) => n + entriesIn(r), 0);
  return 0;
}

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

  it('a client that does not read makes the relay stop reading its run from Redis (one batch at a time), and gets the rest once it reads', async () => {
    let entriesRead = 0;
    const client = await connect();
    const state = { url: '' };
    const relay = new RedisEventRelay(client, async () => {
      const reader = await connect();
      return {
        sendCommand: async (args: string[]) => {
          const reply = await reader.sendCommand(args);
          if (args[0] === 'XREAD') entriesRead += entriesIn(reply);
          return reply;
        },
        close: () => reader.close(),
      };
    }, { authorize: 'allow-all', blockMs: 100, batchSize: 50 });
    const server = createServer((req, res) => void (relay.handle(req, res) || res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    closers.push(async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const run = `s${++runs}`;
    const data = JSON.stringify({ type: 'ProgressMessage', loopId: 'l', toolCallId: 't', toolName: 'x', text: 'p'.repeat(4000), timestamp: 0 });
    for (let i = 1; i <= 4000; i++) await client.sendCommand(['XADD', `run:${run}`, '*', 'seq', String(i), 'kind', 'event', 'data', data]); // 16 MiB, still running
    const { hostname, port } = new URL(state.url);
    const socket = netConnect(Number(port), hostname);
    socket.pause(); // reads nothing for a while
    socket.write(`GET /runs/${run}/events HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 1500));
    const whileStalled = entriesRead;
    // what the kernel's socket buffers took, and one batch more: not the run
    expect(whileStalled).toBeLessThan(2000);
    let received = 0;
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      received += (text.match(/\nid: /g) ?? []).length;
      tail = text.slice(-4).includes('\n') ? text.slice(text.lastIndexOf('\n')) : ''; // a mark cut in two counts once
      if (tail.startsWith('\nid: ')) tail = '';
    });
    socket.resume();
    while (received < 3999) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    console.log(`relay slow reader: ${whileStalled} of 4000 entries (16 MiB) read from Redis while the client did not read; all of them once it did`);
    expect(entriesRead).toBeGreaterThanOrEqual(4000);
  }, 60_000);

  it('a failure inside handle() answers 500 with a JSON error, and the server goes on', async () => {
    const web = await startWeb({ streamKeyOf: (runId) => { if (runId === 'boom') throw new Error('no key for this run'); return `run:${runId}`; } });
    const events = await fetch(`${web.url}/runs/boom/events`);
    expect([events.status, await events.json()]).toEqual([500, { error: 'RedisEventRelay failed: no key for this run' }]);
    const command = await post(`${web.url}/runs/boom/commands`, { type: 'abort' });
    expect([command.status, await command.json()]).toEqual([500, { error: 'RedisEventRelay failed: no key for this run' }]);
    expect((await post(`${web.url}/runs/other/commands`, { type: 'abort' })).status).toBe(404);
  });

  it('hostile requests: an undecodable id 400, text/plain 415, a 64 KiB + 1 body 413, a bad Last-Event-ID 400', async () => {
    const web = await startWeb();
    expect((await fetch(`${web.url}/runs/%E0%A4%A/events`)).status).toBe(400);
    expect((await post(`${web.url}/runs/x/commands`, '{"type":"abort"}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(`${web.url}/runs/x/commands`, 'x'.repeat(64 * 1024 + 1))).status).toBe(413);
    expect((await fetch(`${web.url}/runs/x/events`, { headers: { 'last-event-id': '0x10' } })).status).toBe(400);
    expect((await fetch(`${web.url}/runs/x/events`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
  });
});
