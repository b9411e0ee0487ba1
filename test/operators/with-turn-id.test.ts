import { describe, expect, it } from 'vitest';
import { type AssistantMessage, userMessage, withTurnId } from '../../src/types/message.js';
import { Usage } from '../../src/types/usage.js';

describe('withTurnId', () => {
  const answer: AssistantMessage = {
    role: 'assistant', content: [{ type: 'text', text: 'hi' }], stopReason: 'stop', model: 'm', provider: 'p', usage: Usage.empty(), timestamp: 5,
  };

  it('copies the message with the turn id last, and leaves the message as it was', () => {
    const tagged = withTurnId(answer, { loopId: 'loop-1', turnIndex: 2 });
    expect(tagged).not.toBe(answer);
    expect(tagged).toEqual({ ...answer, turnId: { loopId: 'loop-1', turnIndex: 2 } });
    expect(Object.keys(tagged)).toEqual([...Object.keys(answer), 'turnId']);
    expect('turnId' in answer).toBe(false);
    expect(tagged.content).toBe(answer.content); // a shallow copy: content is shared, as a spread would
  });

  it('replaces a turn id the message already has', () => {
    const once = withTurnId(userMessage('x', 1), { loopId: 'a', turnIndex: 0 });
    const twice = withTurnId(once, { loopId: 'b', turnIndex: 3 });
    expect(twice.turnId).toEqual({ loopId: 'b', turnIndex: 3 });
    expect(once.turnId).toEqual({ loopId: 'a', turnIndex: 0 });
  });

  it('keeps an own __proto__ field of a message parsed from JSON a field (the prototype of the copy stays Object.prototype)', () => {
    const parsed = JSON.parse('{"role":"user","content":"hi","timestamp":1,"__proto__":{"isError":true}}') as ReturnType<typeof userMessage>;
    const tagged = withTurnId(parsed, { loopId: 'l', turnIndex: 0 });
    expect(Object.getPrototypeOf(tagged)).toBe(Object.prototype);
    expect(Object.hasOwn(tagged, '__proto__')).toBe(true);
    expect((tagged as unknown as { isError?: boolean }).isError).toBeUndefined();
  });
});
