import { describe, expect, it } from 'vitest';
import { AssistantMessageBuilder } from '../../src/providers/message-builder.js';
import { isProviderError } from '../../src/types/errors.js';
import type { AssistantMessage } from '../../src/types/message.js';

describe('AssistantMessageBuilder', () => {
  it('keeps interleaved keyed blocks apart and continues the last block of a kind when there is no key', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    b.thinking('th', 0);
    b.text('Hel', 1);
    b.thinking('ink', 0);
    b.text('lo', 1);
    b.text(' again');
    expect(b.partial.content).toEqual([
      { type: 'thinking', thinking: 'think' },
      { type: 'text', text: 'Hello again' },
    ]);
  });

  it('reports the content index of every delta, and hands out snapshots, never the draft', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    const first = b.text('a', 'x');
    const second = b.toolCallStart('call_1', 'read', 'call_1');
    const third = b.text('b', 'x');
    expect([first, second, third].map((e) => (e as { contentIndex: number }).contentIndex)).toEqual([0, 1, 0]);
    const partials = [first, second, third].map((e) => (e as { partial: AssistantMessage }).partial);
    for (const partial of partials) expect(partial).not.toBe(b.partial);
    // Each snapshot still shows the message as it was when its event was made.
    expect(partials.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'a' }],
      [{ type: 'text', text: 'a' }, { type: 'toolCall', id: 'call_1', name: 'read', arguments: {} }],
      [{ type: 'text', text: 'ab' }, { type: 'toolCall', id: 'call_1', name: 'read', arguments: {} }],
    ]);
    // Unchanged blocks are shared between consecutive snapshots; the changed one is new.
    expect(partials[1]!.content[0]).toBe(partials[0]!.content[0]);
    expect(partials[2]!.content[1]).toBe(partials[1]!.content[1]);
    expect(partials[2]!.content[0]).not.toBe(partials[1]!.content[0]);
  });

  it('shows a signature or usage set between deltas in the next snapshot, not in the earlier ones', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    const before = (b.thinking('hm', 0) as { partial: AssistantMessage }).partial;
    b.thinkingSignature('sig', 0);
    b.setUsage({ input: 5, output: 2 });
    const after = (b.text('ok', 1) as { partial: AssistantMessage }).partial;
    expect(before.content[0]).toEqual({ type: 'thinking', thinking: 'hm' });
    expect(before.usage.input).toBe(0);
    expect(after.content[0]).toEqual({ type: 'thinking', thinking: 'hm', signature: 'sig' });
    expect(after.usage).toMatchObject({ input: 5, output: 2, totalTokens: 7 });
  });

  it('start() shows the message before its first content, even when a wire parser calls it after the first delta', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    const first = (b.text('Step 1.') as { partial: AssistantMessage }).partial;
    const start = (b.start() as { partial: AssistantMessage }).partial;
    expect(start.content).toEqual([]);
    expect(first.content).toEqual([{ type: 'text', text: 'Step 1.' }]);
    expect((b.text(' Step 2.') as { partial: AssistantMessage }).partial.content).toEqual([{ type: 'text', text: 'Step 1. Step 2.' }]);
  });

  it('gives a tool-argument delta the previous snapshot: nothing visible changed', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    const start = (b.toolCallStart('call_1', 'read', 0) as { partial: AssistantMessage }).partial;
    const delta = (b.toolCallDelta('{"a"', 0) as { partial: AssistantMessage }).partial;
    expect(delta).toBe(start);
  });

  it('tells number and string keys apart (a provider keys its blocks one way)', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    b.text('a', 1);
    b.text('b', '1');
    expect(b.partial.content).toHaveLength(2);
  });

  it('parses streamed tool arguments once, at finish, and keeps text whole', () => {
    const b = new AssistantMessageBuilder('m', 'p', 0);
    for (const piece of ['Let', ' me', ' look', ' that', ' up', ' for', ' you.']) b.text(piece);
    b.toolCallStart('call_1', 'read', 0);
    for (const piece of ['{"pa', 'th":"a', '.ts"}']) b.toolCallDelta(piece, 0);
    const done = b.finish('toolUse');
    expect(done).toEqual({ type: 'done', message: b.partial });
    expect(b.partial).toMatchObject({
      stopReason: 'toolUse',
      content: [
        { type: 'text', text: 'Let me look that up for you.' },
        { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'a.ts' } },
      ],
    });
  });

  it('fails on malformed arguments, naming the call, unless the message was cut off at length', () => {
    const broken = (): AssistantMessageBuilder => {
      const b = new AssistantMessageBuilder('m', 'p', 0);
      b.toolCallStart('call_1', 'read', 0);
      b.toolCallDelta('{"path":', 0);
      return b;
    };
    let error: unknown;
    try {
      broken().finish('toolUse');
    } catch (e) {
      error = e;
    }
    expect(isProviderError(error)).toBe(true);
    expect((error as Error).message).toContain('Malformed tool-call arguments for "read" (call_1)');
    const cut = broken();
    cut.finish('length');
    expect(cut.partial.content[0]).toMatchObject({ arguments: {} });
  });
});
