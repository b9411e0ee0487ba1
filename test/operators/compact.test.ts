import { describe, expect, it } from 'vitest';
import type { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { compact } from '../../src/operators/compact.js';
import { compactMessages } from '../../src/context/compaction.js';
import { estimateContextTokens } from '../../src/context/tokens.js';
import { DEFAULT_CONTEXT_CONFIG } from '../../src/types/config.js';
import { textOf, userMessage, type AgentMessage, type ToolResultMessage } from '../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const small: AgentMessage[] = [userMessage('hi', 0)];
const bigToolOutput: ToolResultMessage = {
  role: 'toolResult', toolCallId: 'c1', toolName: 'bash', isError: false, timestamp: 2,
  content: [{ type: 'text', text: Array.from({ length: 500 }, (_, i) => `row ${i}`).join('\n') }],
};
const large: AgentMessage[] = [
  userMessage('list rows', 0),
  { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { cmd: 'rows' } }], stopReason: 'toolUse', model: 'm', provider: 'p', usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, timestamp: 1 },
  bigToolOutput,
];

const config = { maxContextTokens: 500, systemPromptTokens: 100, toolOutputMaxLines: 20 };

describe('compact', () => {
  it('passes a small context through with no tier and compacts a large one, one result per context', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const contexts: Observable<readonly AgentMessage[]> = cold('--s--L--|', { s: small, L: large });
      const full = { ...DEFAULT_CONTEXT_CONFIG, ...config };
      expectObservable(contexts.pipe(compact(config))).toBe('--a--b--|', {
        a: { messages: small, tokensBefore: estimateContextTokens(small), tokensAfter: estimateContextTokens(small), fits: true },
        b: compactMessages(large, full, 400),
      });
    });
  });

  it('fits the large context at tier 1 by truncating the tool output to N lines with a marker', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const out$ = cold('-L|', { L: large }).pipe(compact(config));
      expectObservable(out$).toBe('-r|', {
        r: expect.objectContaining({ tier: 1, fits: true, tokensBefore: estimateContextTokens(large) }),
      });
    });
    let result: ToolResultMessage | undefined;
    scheduler().run(({ cold }) => {
      cold('-L|', { L: large }).pipe(compact(config)).subscribe((r) => (result = r.messages[2] as ToolResultMessage));
    });
    expect(textOf(result!).split('\n')).toHaveLength(21);
    expect(textOf(result!)).toContain('[... 480 lines truncated ...]');
  });

  it('takes a budget override (the loop shrinks it after a context-overflow error)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // Within the configured budget, but not within the override.
      expectObservable(cold('-s|', { s: large }).pipe(compact({ maxContextTokens: 100_000 }, { budget: 300 }))).toBe('-r|', {
        r: expect.objectContaining({ tier: 1, fits: true }),
      });
    });
  });

  it('uses the default context config when given none (100k window, 4k for the system prompt)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: large }).pipe(compact())).toBe('r|', {
        r: { messages: large, tokensBefore: estimateContextTokens(large), tokensAfter: estimateContextTokens(large), fits: true },
      });
    });
  });

  it('passes errors and completion through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('context source failed');
      expectObservable(cold<readonly AgentMessage[]>('--#', undefined, boom).pipe(compact())).toBe('--#', undefined, boom);
    });
  });
});
