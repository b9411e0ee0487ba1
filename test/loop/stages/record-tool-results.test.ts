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

describe('recordToolResults', () => {
  it('appends the results to the context and keeps them in toolResults; an aborted signal ends the run', () => {
    const aborted = new AbortController();
    aborted.abort();
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...run(loopState('L', history)), toolResults: [result] };
      const recorded = { ...s, messages: [...history, result], newMessages: [result], sinceRequest: [result] };
      expectObservable(cold('-s-|', { s }).pipe(recordToolResults())).toBe('-r-|', { r: recorded });
      expectObservable(cold('-s-|', { s }).pipe(recordToolResults({ signal: aborted.signal }))).toBe('-r-|', { r: { ...recorded, ended: 'aborted' } });
    });
  });
});
