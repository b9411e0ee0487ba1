/**
 * Beyond one process, scaled to this 2-core machine: 4 worker processes run the agents (6 tool
 * steps each; 200 by default, PHI_RX_SCALE_RUNS to change) against a loopback fake LLM, saving
 * sessions in PostgreSQL and appending events to Redis; 2 web processes relay the runs over SSE
 * (RedisEventRelay). A client per run watches it with `fromEventStream` through web process A;
 * one worker is SIGKILLed mid-run (its unfinished runs continue from their stored sessions on the
 * others), then web process A is SIGKILLed and every client reconnects to B with its
 * Last-Event-ID.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient } from 'redis';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSessionStore } from '../../../src/integrations/postgres/index.js';
import type { AgentEvent } from '../../../src/index.js';
import type { RedisCommander } from '../../../src/integrations/redis/index.js';
import { fromEventStream } from '../../../src/protocols/transport/index.js';
import { isSessionStoreError, type Session } from '../../../src/session/index.js';
import { startCountingLlm, type CountingLlm } from '../../support/counting-llm.js';
import { missingServer, startPostgres, startRedis, type RunningServer } from '../../support/servers.js';
import { describeNeeding } from '../../support/skip.js';

const missing = missingServer('postgres') ?? missingServer('redis');
const WORKERS = 4;
const RUNS = Number(process.env['PHI_RX_SCALE_RUNS'] ?? 200);
const STEPS = 6;
const workerScript = fileURLToPath(new URL('../../support/scale-worker.ts', import.meta.url));
const webScript = fileURLToPath(new URL('../../support/scale-web.ts', import.meta.url));

describeNeeding(missing)('four worker processes, one killed mid-run', () => {
  let postgres: RunningServer;
  let redis: RunningServer;
  let llm: CountingLlm;
  let pool: pg.Pool;
  const workers: ChildProcess[] = [];
  const webs: ChildProcess[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    [postgres, redis, llm] = await Promise.all([startPostgres(), startRedis(), startCountingLlm(STEPS, 80)]);
    pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
    pool.on('error', (e: Error & { code?: string }) => {
      if (e.code !== '57P01') throw e;
    });
  });
  afterAll(async () => {
    const children = [...workers, ...webs];
    for (const w of children) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await Promise.all(children.map((w) => (w.exitCode === null && w.signalCode === null ? new Promise((r) => w.once('exit', r)) : undefined)));
    await Promise.all(clients.map((c) => c.close()));
    await pool?.end();
    await llm?.close();
    await redis?.stop();
    await postgres?.stop();
  });

  it('keeps saved sessions whole, continues the killed runs elsewhere, and relays every event once across web processes', async () => {
    const store = new PostgresSessionStore(pool);
    await store.listIds(); // the schema, created once before the workers start
    const done = new Set<string>();
    const doneBy = new Map<string, number>();
    const ready: Array<Promise<unknown>> = [];
    for (let w = 0; w < WORKERS; w++) {
      const child = fork(workerScript, [], {
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, PG_URL: postgres.url, REDIS_URL: redis.url, LLM_URL: llm.baseUrl, WORKER: `w${w}` },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      workers.push(child);
      ready.push(new Promise((resolve) => child.once('message', resolve)));
      child.on('message', (m: { done?: string }) => {
        if (m.done) {
          done.add(m.done);
          doneBy.set(m.done, w);
        }
      });
    }
    // Two web processes; each reports the event-stream requests it serves.
    const served: Array<Array<{ served: string; lastEventId: string | null }>> = [[], []];
    const ports: number[] = [];
    for (let w = 0; w < 2; w++) {
      const child = fork(webScript, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, REDIS_URL: redis.url }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      webs.push(child);
      ready.push(new Promise((resolve) => child.on('message', (m: { port?: number }) => m.port && resolve((ports[w] = m.port)))));
      child.on('message', (m: { served?: string; lastEventId: string | null }) => m.served && served[w]!.push({ served: m.served, lastEventId: m.lastEventId }));
    }
    await Promise.all(ready);

    // A load balancer in front of the web processes: A while it is up, then B.
    const urlOf = (w: number): string => `http://127.0.0.1:${ports[w]}`;
    let live = 0;
    const balanced: typeof fetch = (url, init) => fetch(String(url).replace(urlOf(0), urlOf(live)), init);
    const runIds = Array.from({ length: RUNS }, (_, i) => `r${i}`);
    let received = 0;
    /** Watches a run like a browser: through web process A, reconnecting (to B, once A is gone) with Last-Event-ID. */
    const watch = (runId: string): Promise<AgentEvent[]> =>
      lastValueFrom(fromEventStream(`${urlOf(0)}/runs/${runId}/events`, { fetch: balanced, retryDelayMs: 50 }).pipe(tap(() => received++), toArray()));
    const relays = runIds.map((id) => watch(id));
    relays.forEach((r) => r.catch(() => undefined)); // awaited below; not unhandled if the test fails first
    await until(async () => served[0]!.length === RUNS); // every client is connected to A
    runIds.forEach((id, i) => workers[i % WORKERS]!.send({ run: id }));

    // Kill worker 0 once some of its runs are saved part-way and none of them has finished.
    const ownRuns = runIds.filter((_, i) => i % WORKERS === 0);
    const partWay = async (): Promise<number> =>
      (await Promise.all(ownRuns.filter((id) => !done.has(id)).map((id) => stepsSaved(store, id)))).filter((s) => s >= 2).length;
    await until(async () => (await partWay()) >= 2);
    workers[0]!.kill('SIGKILL');
    const killed = await new Promise<NodeJS.Signals | null>((resolve) => workers[0]!.once('exit', (_code, signal) => resolve(signal)));
    expect(killed).toBe('SIGKILL');
    const unfinished = ownRuns.filter((id) => !done.has(id));
    expect(unfinished.length).toBeGreaterThan(0);

    // What the dead worker had saved is whole: every one loads and validates.
    const savedAtKill = new Map<string, Session>();
    for (const id of unfinished) {
      const session = await store.load(id).catch((e: unknown) => {
        if (isSessionStoreError(e, 'SessionNotFound')) return undefined;
        throw e;
      });
      if (session) savedAtKill.set(id, session);
    }
    expect(savedAtKill.size).toBeGreaterThanOrEqual(1);

    // Web process A dies too, with every client connected to it mid-run: they go on through B.
    const receivedBeforeWebKill = received;
    live = 1;
    webs[0]!.kill('SIGKILL');
    expect(await new Promise((resolve) => webs[0]!.once('exit', (_code, signal) => resolve(signal)))).toBe('SIGKILL');
    expect(done.size).toBeLessThan(RUNS);

    unfinished.forEach((id, i) => workers[1 + (i % (WORKERS - 1))]!.send({ run: id }));
    await until(async () => done.size === RUNS);
    for (const id of unfinished) expect(doneBy.get(id)).not.toBe(0);

    // Every run's stored conversation took each step exactly once and ended with the answer.
    for (const id of runIds) {
      const session = await store.load(id);
      const messages = session.loops.flatMap((l) => l.messages);
      const steps = messages.filter((m) => m.role === 'toolResult').map((m) => (m.role === 'toolResult' ? m.content : []));
      expect(steps.map((c) => c[0]?.type === 'text' && c[0].text)).toEqual(Array.from({ length: STEPS }, (_, s) => `step ${s + 1} done`));
      const last = messages[messages.length - 1]!;
      expect(last.role === 'assistant' && last.content.some((c) => c.type === 'text' && c.text === `done after ${STEPS} steps`)).toBe(true);
      const before = savedAtKill.get(id);
      if (before) expect(session.loops.slice(0, before.loops.length)).toEqual(before.loops);
    }

    // Each client saw every event of its run's stream once, across the move from A to B, in order.
    const raw = (await connect()) as RedisCommander;
    for (const [i, id] of runIds.entries()) {
      const seen = await relays[i]!;
      const entries = (await raw.sendCommand(['XRANGE', `run:${id}`, '-', '+'])) as Array<[string, string[]]>;
      const events = entries.filter(([, f]) => f[f.indexOf('kind') + 1] === 'event').map(([, f]) => JSON.parse(f[f.indexOf('data') + 1]!) as AgentEvent);
      // The partial messages a MessageUpdate carries are left out of the comparison: the worker's openai source
      // emits a MessageStart whose message already holds the first delta, so the client's rebuild (start + deltas)
      // repeats it. Each event itself — type, loop, delta, timestamp, and every whole message — must match.
      expect(seen.map(withoutPartial)).toEqual(events.map(withoutPartial));
    }
    // Every client started on A; those whose run was still going when A died resumed on B after the last id A sent.
    expect(served[0]!.map((r) => r.served).sort()).toEqual([...runIds].sort());
    expect(served[0]!.every((r) => r.lastEventId === null)).toBe(true);
    const resumed = served[1]!.filter((r) => r.lastEventId !== null);
    expect(receivedBeforeWebKill).toBeGreaterThan(0);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(resumed.filter((r) => unfinished.includes(r.served)).length).toBeGreaterThanOrEqual(1);
    console.info(`[multi-process] ${RUNS} runs; ${resumed.length} clients resumed on web process B, ${unfinished.length} runs continued after the worker kill`);
    // At least one run really continued part-way: steps taken on the dead worker, the rest elsewhere.
    const partWayAtKill = [...savedAtKill.values()].filter((s) => s.loops.flatMap((l) => l.messages).some((m) => m.role === 'toolResult'));
    expect(partWayAtKill.length).toBeGreaterThanOrEqual(1);
  }, 90_000);

  async function connect(): Promise<RedisCommander> {
    const client = createClient({ url: redis.url });
    clients.push(client);
    await client.connect();
    return client;
  }
});

function withoutPartial(event: AgentEvent): unknown {
  if (event.type !== 'MessageUpdate') return event;
  const { message: _partial, ...rest } = event;
  return rest;
}

async function stepsSaved(store: PostgresSessionStore, id: string): Promise<number> {
  const session = await store.load(id).catch((e: unknown) => {
    if (isSessionStoreError(e, 'SessionNotFound')) return undefined;
    throw e;
  });
  return session ? session.loops.flatMap((l) => l.messages).filter((m) => m.role === 'toolResult').length : 0;
}

async function until(condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
