import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { SSE_INVALID_LINE, decodeSse, parseSseJson } from '../../../src/sources/http/sse.js';
import { ProviderError } from '../../../src/types/errors.js';

const bytes = (...parts: string[]) => parts.map((p) => Buffer.from(p, 'utf8'));
const decodeAll = (chunks: Uint8Array[]) => lastValueFrom(from(chunks).pipe(decodeSse(), toArray()));

describe('decodeSse', () => {
  it('parses event and data lines, skipping comments', async () => {
    const events = await decodeAll(bytes('event: message_start\ndata: {"a":1}\n\n: OPENROUTER PROCESSING\n\ndata: [DONE]\n\n'));
    expect(events).toEqual([
      { event: 'message_start', data: '{"a":1}', id: undefined },
      { event: undefined, data: '[DONE]', id: undefined },
    ]);
  });

  it('handles CRLF separators', async () => {
    const events = await decodeAll(bytes('data: {"x":1}\r\n\r\ndata: {"x":2}\r\n\r\n'));
    expect(events.map((e) => e.data)).toEqual(['{"x":1}', '{"x":2}']);
  });

  it('joins a UTF-8 character split across chunks', async () => {
    const whole = Buffer.from('data: Olá 🎉\n\n', 'utf8');
    const cut = whole.indexOf(0xf0) + 2; // inside the 4-byte emoji
    const events = await decodeAll([whole.subarray(0, 9), whole.subarray(9, cut), whole.subarray(cut)]);
    expect(events.map((e) => e.data)).toEqual(['Olá 🎉']);
  });

  it('delivers a last event that lacks the blank line, but drops a line cut mid-way', async () => {
    expect((await decodeAll(bytes('data: a\n\ndata: b\n'))).map((e) => e.data)).toEqual(['a', 'b']);
    expect((await decodeAll(bytes('data: a\n\ndata: {"trunc'))).map((e) => e.data)).toEqual(['a']);
  });

  it('reports non-SSE lines as invalid-line events', async () => {
    const events = await decodeAll(bytes('{"error":{"message":"nope"}}\n\n'));
    expect(events).toEqual([{ event: SSE_INVALID_LINE, data: '{"error":{"message":"nope"}}' }]);
  });
});

describe('parseSseJson', () => {
  it('throws ProviderError other naming the provider and the data', () => {
    expect(parseSseJson('{"a":1}', 'p')).toEqual({ a: 1 });
    try {
      parseSseJson('{"a":', 'openai');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ProviderError);
      expect((e as ProviderError).kind).toBe('other');
      expect((e as ProviderError).message).toMatch(/openai sent a malformed JSON chunk.*\{"a":/);
    }
  });
});
