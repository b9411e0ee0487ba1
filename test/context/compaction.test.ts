import { describe, expect, it } from 'vitest';
import {
  compactMessages, dropMiddle, effectiveBudget, summarizeOldTurns, truncateToolOutputs,
} from '../../src/context/compaction.js';
import { estimateContextTokens } from '../../src/context/tokens.js';
import { DEFAULT_CONTEXT_CONFIG, type ContextConfig } from '../../src/types/config.js';
import type { ToolCall } from '../../src/types/content.js';
import { textOf, userMessage, type AgentMessage, type AssistantMessage, type ToolResultMessage } from '../../src/types/message.js';
import { Usage } from '../../src/types/usage.js';

// ---- a small conversation kit ----------------------------------------------------------------

const user = (text: string, t = 0): AgentMessage => userMessage(text, t);

function assistant(text: string, calls: ToolCall[] = [], t = 0, thinking?: string): AssistantMessage {
  return {
    role: 'assistant',
    content: [...(thinking ? [{ type: 'thinking' as const, thinking, signature: 'sig' }] : []), ...(text ? [{ type: 'text' as const, text }] : []), ...calls],
    stopReason: calls.length > 0 ? 'toolUse' : 'stop',
    model: 'm', provider: 'p', usage: Usage.empty(), timestamp: t,
  };
}

const call = (id: string, args: Record<string, unknown> = {}): ToolCall => ({ type: 'toolCall', id, name: 'read', arguments: args });

function result(id: string, text: string, t = 0): ToolResultMessage {
  return { role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text }], isError: false, timestamp: t };
}

const lines = (n: number, prefix = 'line'): string => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n');
const config = (over: Partial<ContextConfig>): ContextConfig => ({ ...DEFAULT_CONTEXT_CONFIG, systemPromptTokens: 0, ...over });
const texts = (ms: readonly AgentMessage[]): string[] => ms.map((m) => (m.role === 'extension' ? `ext:${m.kind}` : textOf(m)));

/** Every tool call in the context has exactly one result after it, and every result answers an earlier call. */
function expectCallsAndResultsPaired(messages: readonly AgentMessage[]): void {
  const open = new Set<string>();
  const answered = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') {
      // A new assistant message must not leave calls of the previous one unanswered.
      expect([...open], 'tool calls left without results').toEqual([]);
      for (const c of m.content) if (c.type === 'toolCall') open.add(c.id);
    } else if (m.role === 'toolResult') {
      expect(open.has(m.toolCallId), `orphan tool result ${m.toolCallId}`).toBe(true);
      open.delete(m.toolCallId);
      answered.add(m.toolCallId);
    }
  }
  expect([...open], 'tool calls left without results').toEqual([]);
}

/** `turns` tool cycles after a prompt: assistant with `calls` calls, their results, each text `size` chars. */
function toolConversation(turns: number, calls: number, size: number): AgentMessage[] {
  const out: AgentMessage[] = [user(`task ${'x'.repeat(size)}`, 0)];
  let t = 1;
  for (let turn = 0; turn < turns; turn++) {
    const ids = Array.from({ length: calls }, (_, i) => `t${turn}c${i}`);
    out.push(assistant(`turn ${turn} ${'a'.repeat(size)}`, ids.map((id) => call(id)), t++));
    for (const id of ids) out.push(result(id, `${id} ${'r'.repeat(size)}`, t++));
  }
  return out;
}

// ---- tests ----------------------------------------------------------------------------------

describe('effectiveBudget', () => {
  it('is the context window less the system prompt reservation, never negative', () => {
    expect(effectiveBudget(DEFAULT_CONTEXT_CONFIG)).toBe(96_000);
    expect(effectiveBudget({ ...DEFAULT_CONTEXT_CONFIG, maxContextTokens: 100, systemPromptTokens: 500 })).toBe(0);
  });
});

describe('truncateToolOutputs (tier 1)', () => {
  it('keeps head and tail lines of a long tool output with a marker counting the cut lines', () => {
    const [out] = truncateToolOutputs([result('c1', lines(200))], 10);
    expect(textOf(out as ToolResultMessage)).toBe(
      [...lines(5).split('\n'), '[... 190 lines truncated ...]', 'line 196', 'line 197', 'line 198', 'line 199', 'line 200'].join('\n'),
    );
  });

  it('leaves short outputs, images and other roles untouched (same objects)', () => {
    const short = result('c1', lines(10));
    const picture: ToolResultMessage = { ...result('c2', ''), content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] };
    const longUser = user(lines(500));
    const input = [short, picture, longUser];
    const out = truncateToolOutputs(input, 10);
    out.forEach((m, i) => expect(m).toBe(input[i]));
  });

  it('does not mutate its input', () => {
    const long = result('c1', lines(100));
    truncateToolOutputs([long], 4);
    expect(textOf(long)).toBe(lines(100));
  });
});

describe('summarizeOldTurns (tier 2)', () => {
  it('reduces messages between the kept head and tail to their first paragraph', () => {
    const input = [
      user('first\n\nkept whole'),
      user('old question\n\nwith a long second paragraph'),
      assistant('old answer\n\nmore detail', [], 0, 'private reasoning'),
      user('recent\n\nkept whole'),
    ];
    const out = summarizeOldTurns(input, 1, 1);
    expect(texts(out)).toEqual(['first\n\nkept whole', 'old question… [summarized]', 'old answer… [summarized]', 'recent\n\nkept whole']);
    expect(out[0]).toBe(input[0]);
    expect(out[3]).toBe(input[3]);
    // Thinking of an old turn is dropped: it is the most expendable part.
    expect((out[2] as AssistantMessage).content.some((c) => c.type === 'thinking')).toBe(false);
  });

  it('caps a single long paragraph at 200 characters', () => {
    const out = summarizeOldTurns([user('h'), user('y'.repeat(1_000)), user('t')], 1, 1);
    expect(texts(out)[1]).toBe(`${'y'.repeat(200)}… [summarized]`);
  });

  it('leaves a short single-paragraph message as it was', () => {
    const out = summarizeOldTurns([user('h'), user('short'), user('t')], 1, 1);
    expect(texts(out)[1]).toBe('short');
  });

  it('keeps tool calls and tool-result ids, so every result still answers its call', () => {
    const input = [user('go'), assistant('calling\n\nwhy', [call('c1', { path: 'a' })]), result('c1', 'out\n\nmore'), user('recent')];
    const out = summarizeOldTurns(input, 1, 1);
    expect((out[1] as AssistantMessage).content).toContainEqual(call('c1', { path: 'a' }));
    expect(out[2]).toMatchObject({ role: 'toolResult', toolCallId: 'c1', content: [{ type: 'text', text: 'out… [summarized]' }] });
    expectCallsAndResultsPaired(out);
  });
});

describe('dropMiddle (tier 3)', () => {
  it('keeps the first and recent messages and says how many were removed', () => {
    const input = Array.from({ length: 10 }, (_, i) => user(`m${i}`, i));
    const out = dropMiddle(input, 2, 3, 1_000);
    expect(texts(out)).toEqual(['m0', 'm1', '[5 earlier messages were removed to fit the context window]', 'm7', 'm8', 'm9']);
    expect(out[2]).toMatchObject({ role: 'user', timestamp: 7 });
  });

  it('shrinks the recent part further while over budget, keeping at least the last message', () => {
    const input = Array.from({ length: 10 }, (_, i) => user(`m${i} ${'z'.repeat(400)}`, i));
    const out = dropMiddle(input, 1, 5, 250);
    expect(out[0]).toBe(input[0]);
    expect(out[out.length - 1]).toBe(input[9]);
    expect(estimateContextTokens(out)).toBeLessThanOrEqual(250);
    expect(out.length).toBeLessThan(1 + 1 + 5);
  });

  it('never starts the kept tail on a tool result whose call was dropped: it steps back to the call', () => {
    // keepRecent 4 would start the tail on r2, whose call sits in a(c1 c2).
    const calling = assistant('', [call('c1'), call('c2')]);
    const input = [user('go'), assistant('', [call('c0')]), result('c0', 'zero'), calling, result('c1', 'one'), result('c2', 'two'),
      assistant('', [call('c3')]), result('c3', 'three'), user('next')];
    const out = dropMiddle(input, 1, 4, 1_000);
    expect(texts(out.slice(0, 2))).toEqual(['go', '[2 earlier messages were removed to fit the context window]']);
    expect(out.slice(2)).toEqual(input.slice(3));
    expectCallsAndResultsPaired(out);
  });

  it('drops whole exchanges when shrinking for the budget, never leaving a result without its call', () => {
    const input = [user('go'), assistant('', [call('c1'), call('c2')]), result('c1', 'x'.repeat(400)), result('c2', 'y'.repeat(400)),
      assistant('', [call('c3')]), result('c3', 'three'), user('next')];
    const out = dropMiddle(input, 1, 6, 60);
    expect(out.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'toolResult', 'user']);
    expectCallsAndResultsPaired(out);
  });

  it('keeps the latest tool results when the recent window holds nothing but results', () => {
    // The usual shape before a model call: the last assistant asked for many tools at once.
    const input = toolConversation(3, 6, 10);
    const out = dropMiddle(input, 1, 4, 100_000);
    expectCallsAndResultsPaired(out);
    // The results the model is about to read are all still there, with the call that asked for them.
    expect(out.slice(-7)).toEqual(input.slice(-7));
  });

  it('does not cut a tool call in the kept head off from its results', () => {
    const input = toolConversation(4, 2, 10);
    // keepFirst 2 = the prompt and the first assistant, whose two results follow it.
    const out = dropMiddle(input, 2, 3, 100_000);
    expectCallsAndResultsPaired(out);
    expect(out[0]).toBe(input[0]);
    expect(out[1]).toBe(input[1]);
  });

  it('returns the messages as they are when nothing lies between head and tail', () => {
    const input = [user('a'), user('b'), user('c')];
    expect(dropMiddle(input, 2, 10, 1)).toEqual(input);
  });

  it.each([
    [1, 1], [1, 3], [2, 4], [2, 10], [3, 5], [0, 1],
  ])('keeps calls and results paired for keepFirst %i, keepRecent %i at any budget', (keepFirst, keepRecent) => {
    for (const budget of [10, 60, 150, 400, 100_000]) {
      for (const calls of [1, 3]) {
        const input = toolConversation(5, calls, 20);
        const out = dropMiddle(input, keepFirst, keepRecent, budget);
        expectCallsAndResultsPaired(out);
        expect(out[out.length - 1]).toBe(input[input.length - 1]);
      }
    }
  });
});

describe('compactMessages', () => {
  it('passes a context under budget through unchanged, with no tier', () => {
    const input = [user('hi'), assistant('hello')];
    const out = compactMessages(input, config({ maxContextTokens: 1_000 }));
    expect(out).toEqual({ messages: input, tokensBefore: estimateContextTokens(input), tokensAfter: estimateContextTokens(input), fits: true });
    expect(out.tier).toBeUndefined();
    expect(out.messages).not.toBe(input);
  });

  it('subtracts the system prompt reservation from the window', () => {
    const input = [user('x'.repeat(400))]; // ~104 tokens
    expect(compactMessages(input, config({ maxContextTokens: 150 })).tier).toBeUndefined();
    expect(compactMessages(input, config({ maxContextTokens: 150, systemPromptTokens: 100 })).tier).toBeDefined();
  });

  it('stops at tier 1 when truncating tool outputs is enough, leaving old turns alone', () => {
    const oldTurn = `old question\n\n${'detail '.repeat(50)}`;
    const input = [user('task'), user(oldTurn), assistant('', [call('c1')]), result('c1', lines(400)), assistant('done')];
    const before = estimateContextTokens(input);
    const out = compactMessages(input, config({ maxContextTokens: before - 100, toolOutputMaxLines: 20, keepFirst: 1, keepRecent: 1 }));
    expect(out.tier).toBe(1);
    expect(out.fits).toBe(true);
    expect(out.tokensBefore).toBe(before);
    expect(out.tokensAfter).toBe(estimateContextTokens(out.messages));
    expect(out.tokensAfter).toBeLessThanOrEqual(before - 100);
    expect(textOf(out.messages[1] as AssistantMessage)).toBe(oldTurn);
    expect(textOf(out.messages[3] as ToolResultMessage)).toContain('[... 380 lines truncated ...]');
    expect(out.messages).toHaveLength(input.length);
  });

  it('goes on to tier 2 when truncation is not enough', () => {
    const essay = (topic: string): string => `${topic}\n\n${'blah '.repeat(200)}`;
    const input = [user('task'), user(essay('q1')), assistant(essay('a1')), user(essay('q2')), assistant(essay('a2')), user('now')];
    const out = compactMessages(input, config({ maxContextTokens: 200, keepFirst: 1, keepRecent: 1 }));
    expect(out.tier).toBe(2);
    expect(out.fits).toBe(true);
    expect(texts(out.messages)).toEqual(['task', 'q1… [summarized]', 'a1… [summarized]', 'q2… [summarized]', 'a2… [summarized]', 'now']);
  });

  it('goes on to tier 3 when summaries are not enough, and the result fits', () => {
    const input = Array.from({ length: 40 }, (_, i) => user(`message ${i}: ${'w'.repeat(150)}`, i));
    const out = compactMessages(input, config({ maxContextTokens: 300, keepFirst: 2, keepRecent: 10 }));
    expect(out.tier).toBe(3);
    expect(out.fits).toBe(true);
    expect(out.tokensAfter).toBeLessThanOrEqual(300);
    expect(out.messages[0]).toBe(input[0]);
    expect(out.messages[1]).toBe(input[1]);
    expect(textOf(out.messages[2] as AssistantMessage)).toMatch(/^\[\d+ earlier messages were removed to fit the context window\]$/);
    expect(out.messages[out.messages.length - 1]).toBe(input[39]);
  });

  it('reports tier 3 and fits: false when even the smallest context is over budget', () => {
    const input = [user('y'.repeat(4_000)), user('z'.repeat(4_000))];
    const out = compactMessages(input, config({ maxContextTokens: 100, keepFirst: 1, keepRecent: 1 }));
    expect(out).toMatchObject({ tier: 3, fits: false });
    expect(out.tokensAfter).toBeGreaterThan(100);
  });

  it('keeps every tool result paired with its call through all three tiers', () => {
    const input = toolConversation(12, 3, 200);
    const out = compactMessages(input, config({ maxContextTokens: 900, keepFirst: 2, keepRecent: 10 }));
    expect(out.tier).toBe(3);
    expectCallsAndResultsPaired(out.messages);
  });

  it('does not mutate the caller’s messages', () => {
    const input = toolConversation(5, 2, 300);
    const snapshot = structuredClone(input);
    compactMessages(input, config({ maxContextTokens: 200 }));
    expect(input).toEqual(snapshot);
  });
});
