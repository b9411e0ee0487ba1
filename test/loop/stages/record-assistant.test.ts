import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import {
  loopState, preTurnPolicies, recordAssistant, recordToolResults, recoverOverflow, type LoopState,
} from '../../../src/index.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];
const usage = { ...Usage.empty(), input: 3, output: 2, totalTokens: 5 };
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'ok' }], usage, stopReason: 'toolUse' };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'done' }], isError: false, timestamp: 2 };
const run = (s: LoopState): LoopState => ({ ...s, newMessages: [], sinceRequest: [], usage: Usage.empty() });

describe('recordAssistant', () => {
  it('tags the message with the turn and records it, its usage and stop reason; error ends the run; the input is not changed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...run(loopState('L', history)), turnIndex: 3, assistant: answer };
      const e: LoopState = { ...s, assistant: { ...answer, stopReason: 'error' } };
      const stored = { ...answer, turnId: { loopId: 'L', turnIndex: 3 } };
      const failed = { ...e.assistant!, turnId: { loopId: 'L', turnIndex: 3 } };
      expectObservable(cold('-s-e-|', { s, e }).pipe(recordAssistant())).toBe('-a-b-|', {
        a: { ...s, assistant: stored, messages: [...history, stored], newMessages: [stored], sinceRequest: [stored], usage, lastStopReason: 'toolUse' },
        b: { ...e, assistant: failed, messages: [...history, failed], newMessages: [failed], sinceRequest: [failed], usage, lastStopReason: 'error', ended: 'error' },
      });
    });
    expect(answer).not.toHaveProperty('turnId');
  });

  it('passes a state with no message, or an ended one, through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const n = loopState('L', history);
      const d: LoopState = { ...n, assistant: answer, ended: 'guardRail' };
      expectObservable(cold('n-d|', { n, d }).pipe(recordAssistant())).toBe('n-d|', { n, d });
    });
  });
});
