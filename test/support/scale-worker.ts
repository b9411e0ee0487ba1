/**
 * A worker process for the scale-out test: takes run ids over IPC, runs each agent against the
 * fake LLM, appends its events to Redis (`run:<id>`) and saves its session to PostgreSQL after
 * every turn. A run whose session is already stored continues from it (the worker it started on
 * died): its loops so far are kept and the conversation goes on from their messages.
 * Env: PG_URL, REDIS_URL, LLM_URL, WORKER.
 */
import pg from 'pg';
import { createClient } from 'redis';
import { concatMap, defer, from, ignoreElements, lastValueFrom, mergeMap, Subject, tap } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, type AgentEvent, type AgentMessage } from '../../src/index.js';
import { PostgresSessionStore } from '../../src/integrations/postgres/index.js';
import { appendToStream } from '../../src/integrations/redis/index.js';
import { openai } from '../../src/providers/index.js';
import { isSessionStoreError, SessionRecorder, type Session } from '../../src/session/index.js';

const env = (name: string): string => process.env[name] ?? (() => { throw new Error(`${name} not set`); })();
const worker = env('WORKER');
const store = new PostgresSessionStore(new pg.Pool({ connectionString: env('PG_URL'), max: 4 }));
const redis = await createClient({ url: env('REDIS_URL') }).connect();
const model = openai('gpt-4.1-mini', { baseUrl: env('LLM_URL'), apiKey: 'test-key' });
const step = defineTool({ name: 'step', description: 'Takes one step', parameters: z.object({ n: z.number() }), execute: ({ n }) => `step ${n} done` });

async function runAgent(runId: string): Promise<void> {
  const found = await store.load(runId).catch((e: unknown) => {
    if (isSessionStoreError(e, 'SessionNotFound')) return undefined;
    throw e;
  });
  const history = found ? found.loops.flatMap((l) => l.messages) : [];
  // Killed before its first turn was saved: nothing to continue, start again.
  const stored = history.length > 0 ? found : undefined;
  // Killed after its last turn was saved but before it said so: the conversation is finished, nothing to continue.
  const last = history[history.length - 1];
  if (last?.role === 'assistant' && last.stopReason === 'stop' && !last.content.some((c) => c.type === 'toolCall')) {
    process.send?.({ done: runId });
    return;
  }
  let n = 0;
  const agent = new BasicAgent({ model, systemPrompt: runId, agentId: 'counter', sessionId: runId, ids: () => `${worker}-${++n}` }).withTools(step);
  const recorder = new SessionRecorder();
  let run$;
  if (stored) {
    agent.restoreMessages(JSON.stringify(history));
    run$ = agent.continue();
  } else {
    run$ = agent.prompt('Count your steps.');
  }
  // The recorder fills a loop's messages when the loop ends; until then, checkpoints carry the
  // messages this run has finished so far (MessageEnd), so that a continuation has them.
  const finished: AgentMessage[] = [];
  const merged = (): Session => {
    const now = recorder.getSession(runId)!;
    const loops = now.loops.map((l) => (l.messages.length === 0 ? { ...l, messages: finished.slice() } : l));
    return stored ? { ...now, createdAt: stored.createdAt, loops: [...stored.loops, ...loops] } : { ...now, loops };
  };
  await lastValueFrom(
    run$.pipe(
      tap((e: AgentEvent) => {
        recorder.onEvent(e);
        if (e.type === 'MessageEnd') finished.push(e.message);
      }),
      appendToStream(redis, `run:${runId}`, { maxLen: 100_000 }),
      // Saved after each turn, before the next event goes on: a kill loses at most the turn in flight.
      concatMap((e) => (e.type === 'TurnEnd' ? defer(() => store.save(merged())) : from([e]))),
      ignoreElements(),
    ),
    { defaultValue: undefined },
  );
  recorder.flush();
  await store.save(merged());
  process.send?.({ done: runId });
}

const jobs = new Subject<string>();
jobs.pipe(mergeMap((id) => defer(() => runAgent(id)), 8)).subscribe({ error: (e: unknown) => { console.error(e); process.exit(1); } });
process.on('message', (m: { run?: string }) => m.run && jobs.next(m.run));
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: worker });
