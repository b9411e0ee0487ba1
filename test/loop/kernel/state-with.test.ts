import { describe, expect, it } from 'vitest';
import { copyState, loopState, type LoopState, stateWith } from '../../../src/index.js';
import { userMessage } from '../../../src/types/message.js';

describe('stateWith / copyState', () => {
  const s = loopState('loop-1', [userMessage('hi', 1)]);

  it('stateWith gives a new state with the changes, every other field kept, the old one untouched', () => {
    const next = stateWith(s, { turnIndex: 3, ended: 'stop' });
    expect(next).not.toBe(s);
    expect(next).toEqual({ ...s, turnIndex: 3, ended: 'stop' });
    expect(s.turnIndex).toBe(0);
    expect(s.ended).toBeUndefined();
  });

  it('a change to undefined clears the field (it stays present: one shape)', () => {
    const next = stateWith(stateWith(s, { stopRequested: 'enough' }), { stopRequested: undefined });
    expect(next.stopRequested).toBeUndefined();
    expect('stopRequested' in next).toBe(true);
    expect(Object.keys(next)).toEqual(Object.keys(s));
  });

  it('keeps the fields of a state a stage of yours extended, on copy and through built-in changes', () => {
    const mine = { ...s, budget: 7 } as LoopState & { budget: number };
    const copied = copyState(mine) as LoopState & { budget: number };
    expect(copied.budget).toBe(7);
    expect((stateWith(mine, { turnIndex: 1 }) as LoopState & { budget: number }).budget).toBe(7);
  });

  it('copies a plain object literal state too (one a test or a stage wrote by hand)', () => {
    const plain: LoopState = { ...s };
    const copy = copyState(plain);
    expect(copy).toEqual(plain);
    copy.turnIndex = 9;
    expect(plain.turnIndex).toBe(0);
  });
});
