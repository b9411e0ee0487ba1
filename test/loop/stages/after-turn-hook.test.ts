import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { afterTurnHook, loopState, type LoopState } from '../../../src/index.js';
import { emptyAssistant, userMessage, type AgentMessage } from '../../../src/types/message.js';
import type { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];

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
