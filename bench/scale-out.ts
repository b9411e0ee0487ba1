// `npx tsx bench/scale-out.ts [--saves 4000] [--sessions 200] [--concurrency 16] [--runs 20] [--deltas 2000]`
//
// The "Scaling out" figures of the README, against real servers started on loopback for the run
// (test/support/servers.ts: a fresh PostgreSQL cluster with fsync off, a redis-server without
// persistence) and stopped after:
// - sessions saved per second: PostgresSessionStore.save of the contract's sample session (two
//   loops, ~2.5 KB of JSON), `concurrency` saves in flight over a pool of that many connections,
//   spread over `sessions` ids (so saves of one id contend on its row lock);
// - events relayed per second: `runs` scripted agent runs at once, each streaming `deltas` text
//   deltas, appended with appendToStream by one connection and read back by one readStream each
//   (its own connection); from the first event appended to the last `complete` read.
import os from 'node:os';
import pg from 'pg';
import { createClient } from 'redis';
import { lastValueFrom, mergeMap, range, toArray, count } from 'rxjs';
import { BasicAgent } from '../src/index.js';
import { PostgresSessionStore } from '../src/integrations/postgres/index.js';
import { appendToStream, readStream } from '../src/integrations/redis/index.js';
import { sampleSession, scriptedModel, scriptedProvider } from '../src/testing/index.js';
import { startPostgres, startRedis } from '../test/support/servers.js';

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const saves = arg('saves', 4000);
const sessions = arg('sessions', 200);
const concurrency = arg('concurrency', 16);
const runs = arg('runs', 20);
const deltas = arg('deltas', 2000);

const postgres = await startPostgres();
const redis = await startRedis();
try {
  const pool = new pg.Pool({ connectionString: postgres.url, max: concurrency });
  const store = new PostgresSessionStore(pool);
  await store.save(sampleSession('warm-up', 'agent'));
  const bytes = JSON.stringify(sampleSession('s0', 'agent')).length;
  let t = performance.now();
  await lastValueFrom(range(0, saves).pipe(mergeMap((i) => store.save(sampleSession(`s${i % sessions}`, `agent${i % 7}`, `v${i}`)), concurrency), toArray()));
  const saveSeconds = (performance.now() - t) / 1000;
  t = performance.now();
  await lastValueFrom(range(0, saves).pipe(mergeMap((i) => store.load(`s${i % sessions}`), concurrency), toArray()));
  const loadSeconds = (performance.now() - t) / 1000;
  await pool.end();

  const connect = async () => {
    const client = createClient({ url: redis.url });
    client.on('error', (e: Error) => console.error(`redis client: ${e.message}`));
    await client.connect();
    return client;
  };
  const writer = await connect();
  const readers = await Promise.all(Array.from({ length: runs }, connect));
  const text = 'abcd'.repeat(deltas);
  t = performance.now();
  const relayed = await Promise.all(
    readers.map(async (reader, r) => {
      const key = `bench:${r}`;
      const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([{ text, chunkSize: 4 }]), retry: false });
      const read = lastValueFrom(readStream(reader, key, { blockMs: 1000 }).pipe(count()));
      const written = await lastValueFrom(agent.prompt('go').pipe(appendToStream(writer, key, { maxLen: deltas * 4 }), count()));
      const got = await read;
      if (got !== written) throw new Error(`run ${r}: ${written} events appended, ${got} read`);
      return got;
    }),
  );
  const relaySeconds = (performance.now() - t) / 1000;
  const events = relayed.reduce((a, b) => a + b, 0);
  await Promise.all([writer, ...readers].map((c) => c.close()));

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  console.log(`Node ${process.version}, ${os.cpus().length} × ${cpu}, load average ${os.loadavg()[0]!.toFixed(1)} at the end; PostgreSQL and redis-server on 127.0.0.1`);
  console.log('');
  console.log('| measure | workload | result |');
  console.log('|---|---|---:|');
  console.log(`| sessions saved / s | ${fmt(saves)} saves of a ${fmt(bytes)}-byte session over ${sessions} ids, ${concurrency} in flight | ${fmt(saves / saveSeconds)} |`);
  console.log(`| sessions loaded / s | ${fmt(saves)} loads, ${concurrency} in flight | ${fmt(saves / loadSeconds)} |`);
  console.log(`| events relayed / s | ${runs} runs at once × ${fmt(events / runs)} events, one writer connection, one reader each | ${fmt(events / relaySeconds)} |`);
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await redis.stop();
  await postgres.stop();
}
