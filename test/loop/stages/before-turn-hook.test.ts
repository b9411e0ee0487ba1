import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { afterTurnHook, beforeTurnHook, loopState, type LoopState } from '../../../src/index.js';
import { emptyAssistant, userMessage, type AgentMessage } from '../../../src/types/message.js';
import type { Usage } from '../../../src/types/usage.js';

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

describe('afterTurnHook', () => {
  it('calls the hook with the context and the usage of the message; a throw is a HookError; no message, no call', () => {
    const seen: Array<[readonly AgentMessage[], Usage]> = [];
    const answer = emptyAssistant('m', 'p', 1);
    const s: LoopState = { ...loopState('L', [...history, answer]), assistant: answer, turnIndex: 1 };
    const bare = loopState('L', history);
    scheduler().run(({ cold, expectObservable }) => {
      const hook = (messages: readonly AgentMessage[], usage: Usage): void => {
        seen.push([messages, usage]);
        throw new Error('meter full');
      };
      expectObservable(cold('-s---b|', { s, b: bare }).pipe(afterTurnHook(hook))).toBe('-(hs)b|', {
        h: { type: 'HookError', loopId: 'L', hook: 'afterTurn', message: 'meter full', timestamp: 1 },
        s,
        b: bare,
      });
    });
    expect(seen).toEqual([[[...history, answer], answer.usage]]);
  });
});
