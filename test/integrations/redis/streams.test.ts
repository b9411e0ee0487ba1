import { createClient } from 'redis';
import { concat, firstValueFrom, lastValueFrom, map, take, throwError, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicAgent, type AgentEvent } from '../../../src/index.js';
import {
  appendToStream, applyRunControl, readRunControl, readStream, sendRunControl, RemoteRunError, StreamAppendError, StreamTrimmedError,
  type ControllableAgent, type RedisCommander, type RunControl,
} from '../../../src/integrations/redis/index.js';
import { XADD_NUMBERED, XADD_NUMBERED_SHA } from '../../../src/integrations/redis/commands.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { missingServer, startRedis, type RunningServer } from '../../support/servers.js';
import { describeNeeding } from '../../support/skip.js';

const missing = missingServer('redis');

function agent(script: ScriptStep[]): BasicAgent {
  let n = 0;
  return new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(script), systemPrompt: 'sys', ids: () => `id${++n}`, retry: false });
}

/** An event as it was when emitted (the loop later fills in the message a MessageStart carries). */
const snapshot = map((e: AgentEvent): AgentEvent => JSON.parse(JSON.stringify(e)) as AgentEvent);

const script: ScriptStep[] = [{ text: 'The answer, in many small deltas: forty-two.', chunkSize: 2 }];

describeNeeding(missing)('Redis Streams relay against a real redis-server', () => {
  let server: RunningServer;
  const clients: Array<{ close(): Promise<void> }> = [];
  let keys = 0;
  const key = (): string => `run:${++keys}`;
  const connect = async (): Promise<RedisCommander> => {
    const client = createClient({ url: server.url });
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server?.stop();
  });

  it("relays a run's events to a reader in another connection, in order, then completes", async () => {
    const [writer, reader] = [await connect(), await connect()];
    const run = key();
    const reading = lastValueFrom(readStream(reader, run, { blockMs: 200 }).pipe(toArray()));
    const emitted = await lastValueFrom(agent(script).prompt('hi').pipe(appendToStream(writer, run), snapshot, toArray()));
    const read = await reading;
    expect(emitted.length).toBeGreaterThan(20);
    expect(read.map((r) => r.event)).toEqual(emitted);
    expect(new Set(read.map((r) => r.id)).size).toBe(read.length);
  });

  it('resumes after the last id a reader saw: every event once across reconnects', async () => {
    const [writer, reader] = [await connect(), await connect()];
    const run = key();
    const emitted = await lastValueFrom(agent(script).prompt('hi').pipe(appendToStream(writer, run), snapshot, toArray()));
    const seen: AgentEvent[] = [];
    let after = '0';
    for (;;) {
      const part = await lastValueFrom(readStream(reader, run, { after, blockMs: 200 }).pipe(take(7), toArray()));
      seen.push(...part.map((p) => p.event));
      if (part.length < 7) break;
      after = part[part.length - 1]!.id;
    }
    expect(seen).toEqual(emitted);
  });

  it('passes the run error on, after the reader has it as RemoteRunError', async () => {
    const [writer, reader] = [await connect(), await connect()];
    const run = key();
    // A run that errors after its events: the agent's events, then a failure in the worker.
    const failing = concat(agent([{ text: 'x' }]).prompt('hi'), throwError(() => new Error('worker gave up')));
    const err = await lastValueFrom(failing.pipe(appendToStream(writer, run))).catch((e: Error) => e);
    expect(String(err)).toContain('worker gave up');
    const readErr = await lastValueFrom(readStream(reader, run, { blockMs: 200 })).catch((e: unknown) => e);
    expect(readErr).toBeInstanceOf(RemoteRunError);
    expect(String(readErr)).toMatch(/Run on Redis stream "run:\d+" failed \(entry \d+-\d+\): worker gave up/);
  });

  it('fails a reader whose unread events were trimmed by MAXLEN, instead of skipping them', async () => {
    const [writer, reader] = [await connect(), await connect()];
    const run = key();
    const long: ScriptStep[] = [{ text: 'y'.repeat(600), chunkSize: 1 }];
    await lastValueFrom(agent(long).prompt('hi').pipe(appendToStream(writer, run, { maxLen: 50 }), toArray()));
    const fromStart = await lastValueFrom(readStream(reader, run, { blockMs: 200 })).catch((e: unknown) => e);
    expect(fromStart).toBeInstanceOf(StreamTrimmedError);
    expect(String(fromStart)).toMatch(/entries after 0 were trimmed before they were read \(expected entry number 1, found \d+/);
    const gone = await lastValueFrom(readStream(reader, run, { after: '1-0', blockMs: 200 })).catch((e: unknown) => e);
    expect(String(gone)).toContain('entry 1-0 itself is gone');
  });

  it('errors the run with StreamAppendError naming the stream and event when XADD fails', async () => {
    const writer = await connect();
    const run = key();
    await writer.sendCommand(['SET', run, 'not a stream']);
    const err = await lastValueFrom(agent(script).prompt('hi').pipe(appendToStream(writer, run))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamAppendError);
    expect(String(err)).toMatch(new RegExp(`XADD to Redis stream "${run}" failed for AgentStart: WRONGTYPE`));
  });

  it("numbers entries with a script whose SHA-1 is Redis's own", async () => {
    const client = await connect();
    expect(await client.sendCommand(['SCRIPT', 'LOAD', XADD_NUMBERED])).toBe(XADD_NUMBERED_SHA);
  });

  it('rejects a malformed resume id before touching Redis', async () => {
    const reader = await connect();
    expect(() => readStream(reader, 'run:x', { after: 'last' })).toThrow(/"last" is not a Redis stream id/);
  });

  it('carries steering, follow-ups and aborts back to the worker, in order', async () => {
    const [web, workerReader] = [await connect(), await connect()];
    const run = key();
    const controls: RunControl[] = [
      { kind: 'steer', message: 'Use metric units.', policy: 'interrupt' },
      { kind: 'followUp', message: { role: 'user', content: [{ type: 'text', text: 'And in feet?' }], timestamp: 5 } },
      { kind: 'abort', reason: 'user left' },
    ];
    for (const c of controls) await sendRunControl(web, run, c);
    const calls: unknown[][] = [];
    const recorder: ControllableAgent = {
      steer: (...args) => void calls.push(['steer', ...args]),
      followUp: (...args) => void calls.push(['followUp', ...args]),
      abort: (...args) => void calls.push(['abort', ...args]),
    };
    const got = await lastValueFrom(readRunControl(workerReader, run, { blockMs: 200 }).pipe(take(3), toArray()));
    got.forEach(({ control }) => applyRunControl(recorder, control));
    expect(calls).toEqual([
      ['steer', 'Use metric units.', 'interrupt'],
      ['followUp', controls[1]!.kind === 'followUp' && controls[1]!.message],
      ['abort', 'user left'],
    ]);
  });

  it('carries approval answers and tool-call cancellations back to the worker, in order', async () => {
    const [web, workerReader] = [await connect(), await connect()];
    const run = key();
    const controls: RunControl[] = [
      { kind: 'approve', toolCallId: 't1', approved: true, args: { amount: 20 } },
      { kind: 'approve', toolCallId: 't2', approved: false, reason: 'over the limit' },
      { kind: 'cancelToolCall', toolCallId: 't3', reason: 'too slow' },
    ];
    for (const c of controls) await sendRunControl(web, run, c);
    const calls: unknown[][] = [];
    const worker: ControllableAgent = {
      steer: () => undefined,
      followUp: () => undefined,
      abort: () => undefined,
      approve: (...args) => void calls.push(['approve', ...args]),
      cancelToolCall: (...args) => void calls.push(['cancelToolCall', ...args]),
    };
    const got = await lastValueFrom(readRunControl(workerReader, run, { blockMs: 200 }).pipe(take(3), toArray()));
    expect(got.map((g) => g.control)).toEqual(controls);
    got.forEach(({ control }) => applyRunControl(worker, control));
    expect(calls).toEqual([
      ['approve', 't1', { approved: true, args: { amount: 20 } }],
      ['approve', 't2', { approved: false, reason: 'over the limit' }],
      ['cancelToolCall', 't3', 'too slow'],
    ]);
    // An agent that cannot approve is told so, naming the call, rather than the answer being dropped.
    const plain: ControllableAgent = { steer: () => undefined, followUp: () => undefined, abort: () => undefined };
    expect(() => applyRunControl(plain, controls[0]!)).toThrow(/the agent has no approve\(\) for the approval of "t1"/);
  });

  it('aborts a running agent from another connection', async () => {
    const [web, worker, workerReader] = [await connect(), await connect(), await connect()];
    const run = key();
    const slow = agent([{ text: 'slow', delay: 20_000 }]);
    const control = readRunControl(workerReader, run, { blockMs: 100 }).subscribe(({ control: c }) => applyRunControl(slow, c));
    const end = lastValueFrom(slow.prompt('hi').pipe(appendToStream(worker, run)));
    await firstValueFrom(readStream(web, run, { blockMs: 100 }));
    await sendRunControl(web, run, { kind: 'abort', reason: 'stop' });
    const last = await end;
    control.unsubscribe();
    expect(last).toMatchObject({ type: 'AgentEnd' });
    expect((last as Extract<AgentEvent, { type: 'AgentEnd' }>).stopReason).toBe('aborted');
  });

  it('refuses malformed controls, naming the field, on send and on read', async () => {
    const [web, reader] = [await connect(), await connect()];
    const run = key();
    await expect(sendRunControl(web, run, { kind: 'steer', message: 'x', policy: 'later' as 'wait' })).rejects.toThrow(
      /sendRunControl: control.policy must be one of wait, skip, interrupt, got "later"/,
    );
    await expect(sendRunControl(web, run, { kind: 'approve', toolCallId: '', approved: true })).rejects.toThrow(
      /sendRunControl: control.toolCallId must be a non-empty string/,
    );
    await expect(sendRunControl(web, run, { kind: 'approve', toolCallId: 't1', approved: 'yes' as unknown as boolean })).rejects.toThrow(
      /sendRunControl: control.approved must be true or false/,
    );
    await expect(sendRunControl(web, run, { kind: 'approve', toolCallId: 't1', approved: true, args: [1] as never })).rejects.toThrow(
      /sendRunControl: control.args must be an object/,
    );
    await expect(sendRunControl(web, run, { kind: 'cancelToolCall', toolCallId: 't1', reason: 7 as never })).rejects.toThrow(
      /sendRunControl: control.reason must be a string/,
    );
    await expect(sendRunControl(web, run, { kind: 'pause' } as never)).rejects.toThrow(
      /control.kind must be "steer", "followUp", "abort", "approve" or "cancelToolCall", got "pause"/,
    );
    await web.sendCommand(['XADD', `${run}:control`, '*', 'data', JSON.stringify({ kind: 'followUp', message: { role: 'user' } })]);
    const err = await firstValueFrom(readRunControl(reader, run, { blockMs: 100 })).catch((e: unknown) => e);
    expect(String(err)).toMatch(new RegExp(`Redis stream "${run}:control" entry \\d+-\\d+: control.message`));
  });
});
