import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { endTurn, loopState, type LoopState } from '../../../src/index.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const history = [userMessage('earlier', 0)];
const prompt = userMessage('hi', 1);
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 2), content: [{ type: 'text', text: 'hello' }], stopReason: 'toolUse' };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 3 };

describe('endTurn', () => {
  it('records the message and the tool results, emits TurnEnd and moves the turn index on', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', history), turnIndex: 1, assistant: answer, toolResults: [result] };
      const stored = { ...answer, turnId: { loopId: 'L', turnIndex: 1 } };
      expectObservable(cold('-s---|', { s }).pipe(endTurn())).toBe('-(en)|', {
        e: { type: 'TurnEnd', loopId: 'L', turnIndex: 1, message: stored, usage: answer.usage, timestamp: 1, toolResults: [result] },
        n: { ...s, assistant: stored, messages: [...history, stored, result], newMessages: [stored, result], sinceRequest: [stored, result], turnIndex: 2 },
      });
    });
  });

  it('ends the run on an error message, on a requested stop, and on a failed call with no message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const failed: LoopState = { ...loopState('L'), assistant: { ...answer, stopReason: 'error' } };
      const stopped: LoopState = { ...loopState('L'), assistant: answer, stopRequested: 'enough' };
      const broken: LoopState = { ...loopState('L'), failure: { error: new Error('x') } };
      const ended = (o: unknown): unknown => expect.objectContaining({ type: 'LoopState', ended: o });
      expectObservable(cold('a---b---c---|', { a: failed, b: stopped, c: broken }).pipe(endTurn())).toBe('(xa)(yb)c---|', {
        x: expect.objectContaining({ type: 'TurnEnd' }),
        y: expect.objectContaining({ type: 'TurnEnd' }),
        a: ended('error'),
        b: ended('toolUse'),
        c: ended('error'),
      });
    });
  });
});
