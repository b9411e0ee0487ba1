/**
 * The servers the fuzz and slow-reader tests attack, in a process of their own wired as the README
 * wires them (plain node:http, nothing catching): an EventStreamHub and, when REDIS_URL is set, a
 * RedisEventRelay, each with a run "live" that waits. Reports `{ hub, relay }` ports over IPC, and
 * answers `{ memory: true }` with its memory use (after a GC when run with --expose-gc).
 * Env: REDIS_URL (optional), RUN_MIB (a finished run "big" of that many MiB of 1 KiB deltas),
 * (the hub takes no byte limit per client: it pulls frames as each socket drains).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'redis';
import { Subject } from 'rxjs';
import { emptyAssistant, type AgentEvent } from '../../src/index.js';
import { RedisEventRelay } from '../../src/integrations/redis/index.js';
import { EventStreamHub } from '../../src/protocols/transport/node/index.js';

const authorize = (req: IncomingMessage): boolean | Promise<boolean> => {
  const auth = req.headers['x-auth'];
  if (auth === 'throw') throw Object.assign(new Error('bad token'), { status: 401 });
  if (auth === 'reject') return Promise.reject(new Error('token store down'));
  return req.headers.authorization !== 'Bearer no';
};
const start: AgentEvent = { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'l', timestamp: 0 };

const hub = new EventStreamHub({ authorize, maxConnections: 10_000, maxConnectionsPerRun: 10_000, coalesceDeltasMs: false, bufferSize: 1_000_000 });
const live = new Subject<AgentEvent>();
hub.start(live, { steer: () => undefined, abort: () => undefined, approve: () => { throw new Error('no call is waiting'); } }, 'live');
live.next(start);

const runMiB = Number(process.env['RUN_MIB'] ?? 0);
if (runMiB > 0) {
  const big = new Subject<AgentEvent>();
  hub.start(big, {}, 'big');
  const message = emptyAssistant('m', 'p', 0);
  big.next(start);
  big.next({ type: 'MessageStart', loopId: 'l', message, timestamp: 0 });
  const piece = 'x'.repeat(1000);
  for (let i = 0; i < runMiB * 1024; i++) big.next({ type: 'MessageUpdate', loopId: 'l', message, delta: { type: 'text', contentIndex: 0, delta: piece }, timestamp: 0 });
  big.complete();
}

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<number> {
  const server = createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const ports: { hub: number; relay?: number } = { hub: await listen((req, res) => hub.handle(req, res)) };
const url = process.env['REDIS_URL'];
if (url) {
  const client = await createClient({ url }).connect();
  await client.sendCommand(['XADD', 'run:live', '*', 'seq', '1', 'kind', 'event', 'data', JSON.stringify(start)]);
  const relay = new RedisEventRelay(client, () => createClient({ url }).connect(), { authorize, maxConnections: 10_000, maxConnectionsPerRun: 10_000 });
  ports.relay = await listen((req, res) => relay.handle(req, res));
}
process.on('message', (m: { memory?: boolean }) => {
  if (!m.memory) return;
  (globalThis as { gc?: () => void }).gc?.();
  process.send?.({ memory: process.memoryUsage() });
});
process.send?.(ports);
process.on('disconnect', () => process.exit(0));
