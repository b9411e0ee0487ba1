import { describe, expect, it } from 'vitest';
import { estimateContextTokens, estimateMessageTokens, estimateTokens } from '../../src/context/tokens.js';
import { extensionMessage, userMessage, type AgentMessage } from '../../src/types/message.js';
import { Usage } from '../../src/types/usage.js';

describe('estimateTokens', () => {
  it('is about one token per four characters, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(1);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('x'.repeat(4_000))).toBe(1_000);
  });
});

describe('estimateMessageTokens', () => {
  it('counts the text plus a small per-message framing overhead', () => {
    const bare = estimateMessageTokens(userMessage('', 0));
    expect(bare).toBeGreaterThan(0);
    expect(estimateMessageTokens(userMessage('x'.repeat(400), 0))).toBe(100 + bare);
  });

  it('counts thinking, and tool calls by name plus JSON arguments', () => {
    const overhead = estimateMessageTokens(userMessage('', 0));
    const assistant: AgentMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 't'.repeat(40) },
        { type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a.txt' } },
      ],
      stopReason: 'toolUse', model: 'm', provider: 'p', usage: Usage.empty(), timestamp: 0,
    };
    const chars = 40 + 'read'.length + JSON.stringify({ path: 'a.txt' }).length;
    expect(estimateMessageTokens(assistant)).toBe(Math.ceil(chars / 4) + overhead);
  });

  it('charges a flat amount per image, far more than its base64 would suggest by length alone', () => {
    const withImage = userMessage([{ type: 'image', data: 'AAAA', mimeType: 'image/png' }], 0);
    expect(estimateMessageTokens(withImage)).toBeGreaterThanOrEqual(1_000);
  });

  it('costs nothing for extension messages: they never reach the model', () => {
    expect(estimateMessageTokens(extensionMessage('ui', { text: 'x'.repeat(10_000) }, 0))).toBe(0);
  });
});

describe('estimateContextTokens', () => {
  it('sums the messages', () => {
    const a = userMessage('x'.repeat(100), 0);
    const b = userMessage('y'.repeat(300), 0);
    expect(estimateContextTokens([a, b])).toBe(estimateMessageTokens(a) + estimateMessageTokens(b));
    expect(estimateContextTokens([])).toBe(0);
  });
});
