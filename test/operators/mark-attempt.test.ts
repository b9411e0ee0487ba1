import { describe, expect, it } from 'vitest';
import { defer, retry } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { markAttempt, resumeRetry, type AttemptMark } from '../../src/index.js';
import { emptyAssistant } from '../../src/types/message.js';
import type { StreamEvent } from '../../src/types/provider.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const M: AttemptMark = { type: 'attempt' };

describe('markAttempt', () => {
  it('puts a mark before the source on every subscription: each retry starts with one', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-#', { a: 'a', b: 'b' });
      expectObservable(source.pipe(markAttempt(), retry(1))).toBe('Ma-b-Ma-b-#', { M, a: 'a', b: 'b' });
      expectSubscriptions(source.subscriptions).toBe(['^----!', '-----^----!']);
    });
  });

  it('marks a source that completes, once, before its first value', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a: 'a' }).pipe(markAttempt())).toBe('Ma|', { M, a: 'a' });
    });
  });

  it('before a retry and resumeRetry: the second attempt goes on after what the first showed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const p = emptyAssistant('m', 'p', 0);
      const text = (delta: string): StreamEvent => ({ type: 'textDelta', contentIndex: 0, delta, partial: p });
      const attempts = [cold('-a-#', { a: text('Hel') }), cold('-b-c|', { b: text('Hel'), c: text('lo') })];
      let n = 0;
      const out$ = defer(() => attempts[n++]!).pipe(markAttempt(), retry(1), resumeRetry());
      // Without the marks, resumeRetry would take the second attempt's "Hel" as new text.
      expectObservable(out$).toBe('-a----c|', { a: text('Hel'), c: text('lo') });
    });
  });
});
