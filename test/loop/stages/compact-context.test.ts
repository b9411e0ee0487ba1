import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { compactContext, isLoopState, loopState, type LoopState } from '../../../src/index.js';
import { compactMessages } from '../../../src/context/compaction.js';
import { estimateContextTokens } from '../../../src/context/tokens.js';
import { DEFAULT_CONTEXT_CONFIG } from '../../../src/types/config.js';
import { userMessage, type AgentMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const bigToolOutput: ToolResultMessage = {
  role: 'toolResult', toolCallId: 'c1', toolName: 'bash', isError: false, timestamp: 2,
  content: [{ type: 'text', text: Array.from({ length: 500 }, (_, i) => `row ${i}`).join('\n') }],
};
const large: AgentMessage[] = [
  userMessage('list rows', 0),
  { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { cmd: 'rows' } }], stopReason: 'toolUse', model: 'm', provider: 'p', usage: Usage.empty(), timestamp: 1 },
  bigToolOutput,
];
const config = { maxContextTokens: 500, systemPromptTokens: 100, toolOutputMaxLines: 20 };
const full = { ...DEFAULT_CONTEXT_CONFIG, ...config };

const small: LoopState = loopState('L1', [userMessage('hi', 0)]);
const over: LoopState = { ...loopState('L1', large, [userMessage('queued', 3)]), turnIndex: 4 };

describe('compactContext', () => {
  it('passes a state within budget through; compacts one over budget, announced, then the new state', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const result = compactMessages(large, full, 400);
      expectObservable(cold('--s--L-----|', { s: small, L: over }).pipe(compactContext(config))).toBe('--s--(abl)-|', {
        s: small,
        a: { type: 'CompactionStart', loopId: 'L1', reason: 'budget', tokensBefore: estimateContextTokens(large), timestamp: 5 },
        b: {
          type: 'CompactionEnd', loopId: 'L1', tier: 1, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter,
          messagesBefore: 3, messagesAfter: 3, timestamp: 5,
        },
        // Only the messages change: pending, turn index and the rest are carried over.
        l: { ...over, messages: result.messages },
      });
    });
  });

  it('does not change the state it is given', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const out$ = cold('-L-----|', { L: over }).pipe(compactContext(config));
      expectObservable(out$).toBe('-(abl)-|', { a: expect.anything(), b: expect.anything(), l: expect.objectContaining({ type: 'LoopState' }) });
    });
    expect(over.messages).toEqual(large);
    expect(over.messages[2]).toBe(bigToolOutput);
  });

  it('after an overflow compacts even a context within budget, to 60% of what was sent', () => {
    const outputs: unknown[] = [];
    const roomy = { ...config, maxContextTokens: 100_000 };
    scheduler().run(({ cold, flush }) => {
      cold('-L|', { L: over }).pipe(compactContext(roomy, { reason: 'overflow' })).subscribe((o) => outputs.push(o));
      flush();
    });
    const [start, end, state] = outputs as [{ reason: string }, { tokensAfter: number }, LoopState];
    expect(start.reason).toBe('overflow');
    expect(end.tokensAfter).toBeLessThanOrEqual(Math.floor(estimateContextTokens(large) * 0.6));
    expect(isLoopState(state)).toBe(true);
    expect(estimateContextTokens(state.messages)).toBe(end.tokensAfter);
  });

  it('passes an ended run through untouched', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const ended: LoopState = { ...over, ended: 'aborted' };
      expectObservable(cold('-e|', { e: ended }).pipe(compactContext(config))).toBe('-e|', { e: ended });
    });
  });
});
