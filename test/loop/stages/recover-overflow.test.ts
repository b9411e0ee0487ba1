import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { map } from 'rxjs';
import {
  loopState, preTurnPolicies, recordAssistant, recordToolResults, recoverOverflow, type LoopState,
} from '../../../src/index.js';
import { ProviderError } from '../../../src/types/errors.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];
const usage = { ...Usage.empty(), input: 3, output: 2, totalTokens: 5 };
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'ok' }], usage, stopReason: 'toolUse' };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'done' }], isError: false, timestamp: 2 };
const run = (s: LoopState): LoopState => ({ ...s, newMessages: [], sinceRequest: [], usage: Usage.empty() });

describe('recoverOverflow', () => {
  const overflow = { error: ProviderError.contextOverflow('prompt is too long') };
  /** A retry that answers, to show what it was handed. */
  const retry = map((s: LoopState): LoopState => ({ ...s, assistant: answer }));

  it('runs the retry once on a context overflow, with the failure cleared; not again, not after a partial, not for other failures', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const f: LoopState = { ...loopState('L', history), failure: overflow };
      const again: LoopState = { ...f, overflowRecovered: true };
      const shown: LoopState = { ...f, partial: answer };
      const other: LoopState = { ...f, failure: { error: ProviderError.network('reset') } };
      expectObservable(cold('f-a-p-o|', { f, a: again, p: shown, o: other }).pipe(recoverOverflow(retry))).toBe('r-a-p-o|', {
        r: { type: 'LoopState', loopId: 'L', messages: history, pending: [], turnIndex: 0, newMessages: [], sinceRequest: [], usage: f.usage, overflowRecovered: true, assistant: answer },
        a: again,
        p: shown,
        o: other,
      });
    });
  });
});
