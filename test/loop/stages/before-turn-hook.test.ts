import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { beforeTurnHook, loopState, type LoopState } from '../../../src/index.js';
import { userMessage, type AgentMessage } from '../../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];

describe('beforeTurnHook', () => {
  it('asks with the context and the turn about to start; false ends the run as userStop without changing the input', () => {
    const asked: Array<[readonly AgentMessage[], number]> = [];
    const s: LoopState = { ...loopState('L', history), turnIndex: 0 };
    const t: LoopState = { ...loopState('L', history), turnIndex: 1 };
    scheduler().run(({ cold, expectObservable }) => {
      const hook = (messages: readonly AgentMessage[], turnIndex: number): boolean => {
        asked.push([messages, turnIndex]);
        return turnIndex === 0;
      };
      expectObservable(cold('-s-t-|', { s, t }).pipe(beforeTurnHook(hook))).toBe('-s-u-|', { s, u: { ...t, ended: 'userStop' } });
    });
    expect(asked).toEqual([[history, 0], [history, 1]]);
    expect(t.ended).toBeUndefined();
  });

  it('waits for an asynchronous answer; a failed hook is a HookError and the turn goes on; an ended state is not asked', () => {
    let calls = 0;
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const e: LoopState = { ...loopState('L'), ended: 'stop' };
      const slow = (): ReturnType<typeof cold<boolean>> => {
        calls++;
        return cold('---#', {}, new Error('hook down'));
      };
      expectObservable(cold('s-------e|', { s, e }).pipe(beforeTurnHook(slow))).toBe('---(hs)-e|', {
        h: { type: 'HookError', loopId: 'L', hook: 'beforeTurn', message: 'hook down', timestamp: 3 },
        s,
        e,
      });
    });
    expect(calls).toBe(1);
  });
});
