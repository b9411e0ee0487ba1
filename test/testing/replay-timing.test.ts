import { toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, defineTool, userMessage, type AgentEvent } from '../../src/index.js';
import { InMemorySessionStore, recordSession, SessionRecorder } from '../../src/session/index.js';
import type { Session } from '../../src/session/index.js';
import { replayProvider, scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import type { Provider } from '../../src/types/provider.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

/** The run under test: one prompt, a tool call, an answer; ids from a counter. */
function run(provider: Provider) {
  let n = 0;
  return agentLoop(
    [userMessage('What is 2+2?', 0)],
    { systemPrompt: 'Be brief.', messages: [], tools: [add], agentId: 'agent', sessionId: 'session', loopId: 'session.scripted.1' },
    { model: scriptedModel(), provider, retry: false, ids: () => `id-${++n}` },
  );
}

/** Every event of `run(provider)` under a fresh TestScheduler starting at 0. */
function eventsUnderVirtualTime(provider: () => Provider, recorder?: SessionRecorder): AgentEvent[] {
  let events: AgentEvent[] = [];
  new TestScheduler(() => undefined).run(({ flush }) => {
    const run$ = run(provider());
    (recorder ? run$.pipe(recordSession(recorder)) : run$).pipe(toArray()).subscribe((all) => (events = all));
    flush();
  });
  return events;
}

/** What a replay reproduces exactly: every event but the streaming deltas, ids and timestamps included. */
const lifecycle = (events: AgentEvent[]) => JSON.parse(JSON.stringify(events.filter((e) => e.type !== 'MessageUpdate'))) as unknown[];
const timestamps = (events: AgentEvent[]) => events.filter((e) => e.type !== 'MessageUpdate').map((e) => `${e.type}@${e.timestamp}`);

describe('replayProvider reproduces the timestamps of a recording made with model latency', () => {
  // The model took 120 ms to start the tool call and 300 ms to start the answer, streaming in between.
  const slowModel = () =>
    scriptedProvider([
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }], delay: 120, chunkDelay: 7 },
      { text: 'It is 4, as the tool says.', delay: 300, chunkDelay: 11 },
    ]);

  async function recordAndStore(): Promise<{ recorded: AgentEvent[]; session: Session }> {
    const recorder = new SessionRecorder();
    const recorded = eventsUnderVirtualTime(slowModel, recorder);
    recorder.flush();
    const store = new InMemorySessionStore();
    await store.save(recorder.drainCompleted()[0]!);
    return { recorded, session: await store.load('session') };
  }

  it('every lifecycle event comes again at its recorded time, ids included', async () => {
    const { recorded, session } = await recordAndStore();
    // The model's latency is in the recording: the tool call started at 120 ms, the answer at 455 and ended at 543.
    expect(timestamps(recorded)).toEqual(expect.arrayContaining(['MessageStart@120', 'MessageStart@455', 'MessageEnd@543', 'AgentEnd@543']));
    const replayed = eventsUnderVirtualTime(() => replayProvider(session));
    expect(timestamps(replayed)).toEqual(timestamps(recorded));
    expect(lifecycle(replayed)).toEqual(lifecycle(recorded));
  });

  it("'immediate' timing (the former behaviour) does not reproduce them", async () => {
    const { recorded, session } = await recordAndStore();
    const replayed = eventsUnderVirtualTime(() => replayProvider(session, { timing: 'immediate' }));
    expect(timestamps(replayed)).not.toEqual(timestamps(recorded));
    expect(timestamps(replayed).at(-1)).toBe('AgentEnd@0');
  });
});
