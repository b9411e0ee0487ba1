import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, Subject, toArray } from 'rxjs';
import { agentLoopParallel, AgentError, BasicAgent, textOf, userMessage, type AssistantMessage, type ParallelOutcomes } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { context, model } from './helpers.js';

describe('cancelling one branch of a parallel run', () => {
  it('agent.cancelBranch(index) aborts that branch while the others go on; the evaluation sees it failed', async () => {
    const agent = new BasicAgent({ model, provider: scriptedProvider([]), retry: false, sessionId: 's' });
    let judged: ParallelOutcomes | undefined;
    const pickFirstSuccess = (input: ParallelOutcomes) => {
      judged = input;
      return input.outcomes.findIndex((o) => !o.failed);
    };
    const configs = [
      { provider: scriptedProvider([{ text: 'slow answer', delay: 20_000 }]), configId: 'slow' },
      { provider: scriptedProvider([{ text: 'quick answer', delay: 5 }]), configId: 'quick' },
      { provider: scriptedProvider([{ text: 'steady answer', delay: 60 }]), configId: 'steady' },
    ];
    const quickEnded = firstValueFrom(agent.events$.pipe(filter((e) => e.type === 'AgentEnd' && e.loopId.includes('.quick.'))));
    const run = lastValueFrom(agent.promptParallel('go', configs, pickFirstSuccess).pipe(toArray()));
    await quickEnded;
    expect(agent.cancelBranch(1)).toBe(false); // already ended: nothing to do
    expect(() => agent.cancelBranch(3)).toThrow(/cancelBranch\(3\): no such branch \(branches: 0\.\.2 or s\.slow\.1, s\.quick\.1, s\.steady\.1\)/);
    expect(() => agent.cancelBranch('s.nope.1')).toThrow(AgentError);
    const t0 = Date.now();
    expect(agent.cancelBranch(0, 'taking too long')).toBe(true);
    const all = await run;
    expect(Date.now() - t0).toBeLessThan(10_000);
    const ends = all.filter((e) => e.type === 'AgentEnd');
    expect(ends.map((e) => [e.loopId, e.type === 'AgentEnd' && e.stopReason])).toEqual(
      expect.arrayContaining([['s.slow.1', 'aborted'], ['s.quick.1', 'stop'], ['s.steady.1', 'stop']]),
    );
    expect(judged!.outcomes.map((o) => [o.failed, o.cancelled])).toEqual([[true, true], [false, false], [false, false]]);
    expect(textOf(agent.messages.at(-1) as AssistantMessage)).toBe('quick answer');
    expect(() => agent.cancelBranch(0)).toThrow(/no parallel run is active/);
  });

  it('agentLoopParallel with cancelBranches: by loop id, with a reason', async () => {
    const cancel = new Subject<{ branch: string; reason: string }>();
    const configs = [
      { model, provider: scriptedProvider([{ text: 'a', delay: 20_000 }]), configId: 'a', retry: false as const },
      { model, provider: scriptedProvider([{ text: 'b', delay: 30 }]), configId: 'b', retry: false as const },
    ];
    const run$ = agentLoopParallel([userMessage('go', 0)], context(), configs, (input) => input.outcomes.findIndex((o) => !o.failed), { cancelBranches: cancel, loopIds: ['L.a', 'L.b'] });
    const done = lastValueFrom(run$.pipe(toArray()));
    setTimeout(() => cancel.next({ branch: 'L.a', reason: 'user' }), 5);
    const all = await done;
    expect(all.find((e) => e.type === 'AgentEnd' && e.loopId === 'L.a')).toMatchObject({ stopReason: 'aborted' });
    expect(all.at(-1)).toMatchObject({ type: 'ParallelLoopEnd', selectedLoopId: 'L.b' });
    expect(cancel.observed).toBe(false);
  });
});
