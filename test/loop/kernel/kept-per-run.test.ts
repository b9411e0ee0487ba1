import { describe, expect, it } from 'vitest';
import { keptPerRun, loopState, type RunInfo } from '../../../src/index.js';

const run = (agentId: string): RunInfo => ({ agentId, sessionId: 's', firstTrigger: 'user' });

describe('keptPerRun', () => {
  it('makes one value per run, on its first state, whatever other runs come between; without a run, one per loop id', () => {
    const made: string[] = [];
    const counterOf = keptPerRun((state) => {
      made.push(state.loopId);
      return { n: 0 };
    });
    const a = run('a');
    const b = run('b');
    counterOf(loopState('LA', [], [], a)).n++;
    counterOf(loopState('LB', [], [], b)).n++;
    counterOf(loopState('LA', [], [], a)).n++;
    expect(counterOf(loopState('LA', [], [], a)).n).toBe(2);
    expect(counterOf(loopState('LB', [], [], b)).n).toBe(1);
    // States without a run: the value of the loop seen last, made anew for another loop.
    counterOf(loopState('X')).n++;
    expect(counterOf(loopState('X')).n).toBe(1);
    expect(counterOf(loopState('Y')).n).toBe(0);
    expect(made).toEqual(['LA', 'LB', 'X', 'Y']);
  });

  it('keeps an undefined value as made (made once, not on every state)', () => {
    let calls = 0;
    const none = keptPerRun(() => void calls++);
    const r = run('a');
    none(loopState('L', [], [], r));
    none(loopState('L', [], [], r));
    expect(calls).toBe(1);
  });
});
