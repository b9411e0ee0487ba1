/**
 * A web process for the scale-out test: serves runs that the workers execute, over SSE, from
 * their Redis streams (RedisEventRelay), and passes commands back. Reports its port over IPC once
 * listening, and each event-stream request it gets (`{ served, lastEventId }`).
 * Env: REDIS_URL, WEB.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'redis';
import { RedisEventRelay } from '../../src/integrations/redis/index.js';

const url = process.env['REDIS_URL'] ?? (() => { throw new Error('REDIS_URL not set'); })();
const relay = new RedisEventRelay(await createClient({ url }).connect(), () => createClient({ url }).connect(), { authorize: 'allow-all', blockMs: 200, retryMs: 50 });
const server = createServer((req, res) => {
  const match = /^\/runs\/([^/]+)\/events$/.exec(req.url ?? '');
  if (match) process.send?.({ served: match[1], lastEventId: req.headers['last-event-id'] ?? null });
  if (!relay.handle(req, res)) res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => process.exit(0));
