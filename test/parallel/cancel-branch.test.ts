import { describe, expect, it } from 'vitest';
import { Subject } from 'rxjs';
import { agentLoopParallel, AgentError, BasicAgent, textOf, userMessage, type AgentEvent, type AssistantMessage, type ParallelOutcomes } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { context, model, testScheduler } from '../agent/helpers.js';

describe('cancelling one branch of a parallel run (virtual time)', () => {
  it('agent.cancelBranch(index) aborts that branch while the others go on; the evaluation sees it failed', () => {
    testScheduler().run(({ cold, flush }) => {
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
      const all: AgentEvent[] = [];
      agent.promptParallel('go', configs, pickFirstSuccess).subscribe((e) => all.push(e));
      // At 10 ms the quick branch has ended, the slow and steady ones are still running.
      cold('10ms a').subscribe(() => {
        expect(all.some((e) => e.type === 'AgentEnd' && e.loopId === 's.quick.1')).toBe(true);
        expect(agent.cancelBranch(1)).toBe(false); // already ended: nothing to do
        expect(() => agent.cancelBranch(3)).toThrow(/cancelBranch\(3\): no such branch \(branches: 0\.\.2 or s\.slow\.1, s\.quick\.1, s\.steady\.1\)/);
        expect(() => agent.cancelBranch('s.nope.1')).toThrow(AgentError);
        expect(agent.cancelBranch(0, 'taking too long')).toBe(true);
      });
      flush();
      const ends = all.filter((e) => e.type === 'AgentEnd');
      expect(ends.map((e) => [e.loopId, e.type === 'AgentEnd' && e.stopReason])).toEqual(
        expect.arrayContaining([['s.slow.1', 'aborted'], ['s.quick.1', 'stop'], ['s.steady.1', 'stop']]),
      );
      expect(ends.find((e) => e.loopId === 's.slow.1')!.timestamp).toBe(10); // cut at the cancel, not at 20 s
      expect(judged!.outcomes.map((o) => [o.failed, o.cancelled])).toEqual([[true, true], [false, false], [false, false]]);
      expect(textOf(agent.messages.at(-1) as AssistantMessage)).toBe('quick answer');
      expect(() => agent.cancelBranch(0)).toThrow(/no parallel run is active/);
    });
  });

  it('agentLoopParallel with cancelBranches: by loop id, with a reason', () => {
    testScheduler().run(({ cold, flush }) => {
      const cancel = new Subject<{ branch: string; reason: string }>();
      const configs = [
        { model, provider: scriptedProvider([{ text: 'a', delay: 20_000 }]), configId: 'a', retry: false as const },
        { model, provider: scriptedProvider([{ text: 'b', delay: 30 }]), configId: 'b', retry: false as const },
      ];
      const run$ = agentLoopParallel([userMessage('go', 0)], context(), configs, (input) => input.outcomes.findIndex((o) => !o.failed), { cancelBranches: cancel, loopIds: ['L.a', 'L.b'] });
      const all: AgentEvent[] = [];
      run$.subscribe((e) => all.push(e));
      cold('5ms a').subscribe(() => cancel.next({ branch: 'L.a', reason: 'user' }));
      flush();
      expect(all.find((e) => e.type === 'AgentEnd' && e.loopId === 'L.a')).toMatchObject({ stopReason: 'aborted', timestamp: 5 });
      expect(all.at(-1)).toMatchObject({ type: 'ParallelLoopEnd', selectedLoopId: 'L.b' });
      expect(cancel.observed).toBe(false);
    });
  });
});
