import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { boundedDecode, decodeSse, DEFAULT_MAX_EVENT_BYTES, type SseEvent } from '../../../src/sources/http/index.js';
import { ProviderError } from '../../../src/types/errors.js';

/** decodeSse under a 16-byte limit, fed by hand: what came out, the error if any, whether the body was let go. */
function harness(max = 16) {
  let push: (chunk: Uint8Array) => void = () => undefined;
  let released = false;
  const body = new Observable<Uint8Array>((subscriber) => {
    push = (chunk) => subscriber.next(chunk);
    return () => {
      released = true;
    };
  });
  const events: string[] = [];
  let error: unknown;
  body.pipe(boundedDecode(decodeSse(), 'test', max)).subscribe({ next: (e: SseEvent) => events.push(e.data), error: (e: unknown) => (error = e) });
  return {
    feed: (text: string) => push(new TextEncoder().encode(text)),
    events,
    error: () => error,
    released: () => released,
  };
}

describe('boundedDecode', () => {
  it('defaults to 8 MiB', () => {
    expect(DEFAULT_MAX_EVENT_BYTES).toBe(8 * 1024 * 1024);
  });

  it('passes events whose bytes stay within the limit, the count starting again after each', () => {
    const h = harness();
    h.feed('data: 0123456\n\n'); // 15 bytes
    h.feed('data: abcdefg\n\n'); // 15 more: fine, the first event reset the count
    expect(h.events).toEqual(['0123456', 'abcdefg']);
    expect(h.error()).toBeUndefined();
  });

  it('fails once more than the limit arrives without an event, with a non-retryable ProviderError, and lets go of the body', () => {
    const h = harness();
    h.feed('data: 01234');
    h.feed('56789abcdef'); // 22 bytes, no line end
    expect(h.error()).toBeInstanceOf(ProviderError);
    expect((h.error() as ProviderError).retryable).toBe(false);
    expect((h.error() as ProviderError).message).toBe(
      'test sent over 16 bytes without completing an event (an SSE line or event, or a frame, over maxEventBytes): the request was aborted',
    );
    expect(h.released()).toBe(true);
  });
});
