import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { BasicAgent, defineTool, textOf, type AgentEvent, type AgentMessage, type ParallelOutcomes } from '../../src/index.js';
import { z } from 'zod';
import { recordSession, SessionRecorder, sessionQueries } from '../../src/session/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';

const userTexts = (messages: readonly AgentMessage[]) =>
  messages.filter((m) => m.role === 'user').map((m) => textOf(m as never));

describe('BasicAgent: a continue() refused before it starts', () => {
  it('consumes no loop id and does not become the parent of the next continuation', async () => {
    const recorder = new SessionRecorder();
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([{ text: 'one' }, { text: 'two' }]), configId: 'c' });
    const record = (run$: ReturnType<BasicAgent['prompt']>) => lastValueFrom(run$.pipe(recordSession(recorder), toArray()));
    await record(agent.prompt('hi'));
    const first = `${agent.sessionId}.c.1`;
    expect(agent.lastLoopId).toBe(first);

    await expect(record(agent.continue())).rejects.toMatchObject({ code: 'InvalidContinue' });
    await expect(record(agent.continue('rerun'))).rejects.toMatchObject({ code: 'InvalidContinue' });
    expect(agent.lastLoopId).toBe(first);

    agent.followUp('more');
    const events: AgentEvent[] = await record(agent.continue());
    expect(events[0]).toMatchObject({ type: 'AgentStart', loopId: `${agent.sessionId}.c.2`, parentLoopId: first });
    const session = recorder.getSession(agent.sessionId)!;
    expect(session.loops.map((l) => l.loopId)).toEqual([first, `${agent.sessionId}.c.2`]);
    expect(sessionQueries(session).childrenOf(first).map((l) => l.loopId)).toEqual([`${agent.sessionId}.c.2`]);
  });
});

describe('BasicAgent.promptParallel: steering and follow-ups are never lost', () => {
  /** A tool that steers the agent (as a UI would while the run is active) and queues a follow-up. */
  const interjecting = (agent: () => BasicAgent) =>
    defineTool({
      name: 'look',
      description: 'Looks',
      parameters: z.object({}),
      execute: () => {
        agent().steer('steered during the run');
        agent().followUp('follow-up during the run');
        return 'looked';
      },
    });

  it('the winner takes what it used; everything it did not use stays queued', async () => {
    let self: BasicAgent | undefined;
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]), tools: [interjecting(() => self!)] });
    self = agent;
    agent.steer('queued before the run');

    // Winner: calls the tool (which queues two messages), then answers; it sees both steering
    // messages at its checkpoints and the follow-up when it would stop.
    const winner = scriptedProvider([{ toolCalls: [{ name: 'look', arguments: {} }] }, { text: 'w2' }, { text: 'w3' }]);
    // Loser (first, so it starts first): only answers, taking "queued before the run" at its first
    // checkpoint and any follow-up it sees; what it takes must not be lost to the winner.
    const loser = scriptedProvider([{ text: 'l1' }, { text: 'l2' }, { text: 'l3' }, { text: 'l4' }, { text: 'l5' }]);
    const pickWinner = ({ outcomes }: ParallelOutcomes) => outcomes.findIndex((o) => o.loopId.includes('.winner.'));
    await lastValueFrom(agent.promptParallel('go', [{ provider: loser, configId: 'loser' }, { provider: winner, configId: 'winner' }], pickWinner).pipe(toArray()));

    expect(userTexts(agent.messages)).toEqual(['go', 'queued before the run', 'steered during the run', 'follow-up during the run']);
    expect(agent.queuedSteering).toBe(0);
    expect(agent.queuedFollowUps).toBe(0);
  });

  it('when the winner did not take them, they stay queued for the next run', async () => {
    let self: BasicAgent | undefined;
    const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]), tools: [interjecting(() => self!)] });
    self = agent;
    const quick = scriptedProvider([{ text: 'quick' }]);
    const slow = scriptedProvider([{ toolCalls: [{ name: 'look', arguments: {} }] }, { text: 's2' }, { text: 's3' }]);
    const pickQuick = ({ outcomes }: ParallelOutcomes) => outcomes.findIndex((o) => o.loopId.includes('.quick.'));
    await lastValueFrom(agent.promptParallel('go', [{ provider: quick, configId: 'quick' }, { provider: slow, configId: 'slow' }], pickQuick).pipe(toArray()));

    expect(userTexts(agent.messages)).toEqual(['go']);
    expect(agent.queuedSteering).toBe(1);
    expect(agent.queuedFollowUps).toBe(1);
    const next = scriptedProvider([{ text: 'now' }, { text: 'and then' }]);
    agent.with({ provider: next });
    await agent.run('next');
    expect(userTexts(agent.messages)).toEqual(['go', 'next', 'steered during the run', 'follow-up during the run']);
  });
});
