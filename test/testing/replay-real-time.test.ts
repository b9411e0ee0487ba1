import { lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, defineTool, type AgentContext, type AgentEvent } from 'phi-rx';
import { recordSession, SessionRecorder } from 'phi-rx/session';
import { describeEvent, replayProvider, scriptedModel, scriptedProvider } from 'phi-rx/testing';

/** A tool that takes 25 ms of the recording's real time (and none of the replay's virtual time). */
const slowAdd = defineTool({
  name: 'add', description: 'Adds two numbers, slowly', parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => {
    const until = Date.now() + 25;
    while (Date.now() < until) {
      // busy: the time between the first answer and the second request
    }
    return String(a + b);
  },
});

/** No agentId, sessionId or loopId, no `ids`: every id of the recording is a fresh UUID. */
const context: AgentContext = { systemPrompt: 'You add.', messages: [], tools: [slowAdd] };
const model = scriptedModel();

const lifecycle = (events: readonly AgentEvent[]): string[] => events.filter((e) => e.type !== 'MessageUpdate').map(describeEvent);
const assistantTimes = (events: readonly AgentEvent[]): number[] => {
  const start = events[0]!.timestamp;
  return events.filter((e) => (e.type === 'MessageStart' || e.type === 'MessageEnd') && e.message.role === 'assistant').map((e) => e.timestamp - start);
};

describe('replaying a real-time recording', () => {
  it('reproduces its ids and, in virtual time, its relative timing (each answer at its recorded offset from the run\'s start)', async () => {
    // 1. Recorded in real time (asyncScheduler), as an app records: no ids, no session id, model latency and a slow tool.
    const recorder = new SessionRecorder();
    const live = scriptedProvider([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }], delay: 40, chunkDelay: 5 },
      { text: 'It is 3.', delay: 30, chunkDelay: 5 },
    ]);
    const recorded = await lastValueFrom(agentLoop('What is 1+2?', context, { model, provider: live, retry: false }).pipe(recordSession(recorder), toArray()));
    recorder.flush();
    const session = recorder.drainCompleted()[0]!;

    // 2. Replayed in virtual time: the recording's ids and prompts, the replay provider.
    const replay = replayProvider(session);
    let replayed: AgentEvent[] = [];
    const scheduler = new TestScheduler(() => undefined);
    scheduler.run(({ flush }) => {
      agentLoop(replay.prompts(), { ...context, ...replay.context() }, { model, provider: replay, retry: false, scheduler })
        .pipe(toArray())
        .subscribe((all) => (replayed = all));
      flush();
    });
    replay.assertComplete();

    // The ids: the run's, and the tool call's.
    const start = (events: AgentEvent[]) => events.find((e) => e.type === 'AgentStart')!;
    expect(start(replayed)).toEqual({ ...start(recorded), timestamp: 0 });
    expect(replay.context()).toEqual({ agentId: session.agentId, sessionId: session.sessionId, loopId: session.loops[0]!.loopId });
    const callIds = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'ToolExecutionEnd' ? [e.toolCallId] : []));
    expect(callIds(replayed)).toEqual(callIds(recorded));
    expect(lifecycle(replayed)).toEqual(lifecycle(recorded));
    // The prompt as recorded, its timestamp included.
    const prompt = (events: AgentEvent[]) => events.find((e) => e.type === 'MessageEnd' && e.message.role === 'user');
    expect(prompt(replayed)).toMatchObject({ message: (prompt(recorded) as { message: unknown }).message });

    // The timing: each answer's MessageStart and MessageEnd at the recorded offset from the run's start, the
    // second one after the tool's 25 ms too (which took no virtual time here).
    const times = assistantTimes(recorded);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(25);
    expect(assistantTimes(replayed)).toEqual(times);
  });

  it('context() and prompts() of a message list, or of a loop the recording does not have, say so', () => {
    expect(() => replayProvider([]).context()).toThrow(/no recorded loop 0: a message list has no recorded loops/);
  });
});
