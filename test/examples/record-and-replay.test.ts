import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { map, merge, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent } from '../../src/index.js';
import { FileSessionStore, recordSession, SessionRecorder } from '../../src/session/index.js';
import { replayProvider } from '../../src/testing/index.js';
import { main, originalProvider, travelRun } from '../../examples/record-and-replay.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'phi-rx-rr-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The recorded events as an Observable that emits each at its own timestamp (virtual time). */
function atRecordedTimes(events: AgentEvent[]): Observable<AgentEvent> {
  return merge(...events.map((e) => timer(e.timestamp).pipe(map(() => e))));
}

describe('record and replay', () => {
  it('the example runs: recorded and replayed sequences are identical', async () => {
    expect(await main()).toMatchObject({ same: true });
  });

  it('a recorded run with tools and steering replays event for event, ids and timestamps included (marble test)', async () => {
    // 1. Record under virtual time, with 5ms between streamed chunks.
    const recorded: AgentEvent[] = [];
    const recorder = new SessionRecorder();
    new TestScheduler(() => undefined).run(({ flush }) => {
      travelRun(originalProvider(5)).pipe(recordSession(recorder)).subscribe((e) => recorded.push(e));
      flush();
    });
    recorder.flush();
    const store = new FileSessionStore(dir);
    await store.save(recorder.drainCompleted()[0]!);
    expect(recorded.some((e) => e.type === 'MessageStart' && e.message.role === 'user' && JSON.stringify(e.message).includes('Celsius'))).toBe(true);

    // 2. Replay the stored session in a marble test: the same prompt against the replay provider.
    const session = await store.load('session-1');
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ expectObservable }) => {
      const provider = replayProvider(session, { delayMs: 5 });
      expectObservable(travelRun(provider)).toEqual(atRecordedTimes(recorded));
    });
  });

  it('a request that diverges from the recording fails saying at which turn and how', async () => {
    const recorder = new SessionRecorder();
    await new Promise<void>((resolve) => travelRun(originalProvider()).pipe(recordSession(recorder)).subscribe({ complete: resolve }));
    recorder.flush();
    // Tamper with a copy of the recording (what the run emitted is frozen under PHI_RX_FREEZE): the first
    // answer asks for a different city than the replayed tool will see.
    const session = structuredClone(recorder.drainCompleted()[0]!);
    const firstUser = session.loops[0]!.messages[0]!;
    (firstUser as { content: { text: string }[] }).content[0]!.text = 'Compare Paris and Rome.';
    const events: AgentEvent[] = [];
    await new Promise<void>((resolve) => travelRun(replayProvider(session)).subscribe({ next: (e) => events.push(e), complete: resolve }));
    const end = events.at(-1) as Extract<AgentEvent, { type: 'AgentEnd' }>;
    expect(end.stopReason).toBe('error');
    const last = end.messages.at(-1) as { errorMessage?: string };
    expect(last.errorMessage).toMatch(/turn 1/i);
    expect(last.errorMessage).toMatch(/Paris and Rome/);
  });
});
