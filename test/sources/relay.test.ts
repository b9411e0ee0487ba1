import { describe, expect, it } from 'vitest';
import { Observable, Subject } from 'rxjs';
import { relay } from '../../src/sources/relay.js';

/** A producer that ignores the subscriber contract: it keeps calling after it has ended. */
function unruly(end: 'complete' | 'error'): Observable<number> {
  return new Observable<number>((subscriber) => {
    subscriber.next(1);
    if (end === 'complete') subscriber.complete();
    else subscriber.error(new Error('boom'));
    subscriber.next(2);
    subscriber.complete();
    subscriber.error(new Error('again'));
  });
}

describe('relay', () => {
  it('hands each value to the observer, and nothing after completion or an error', () => {
    for (const end of ['complete', 'error'] as const) {
      const seen: string[] = [];
      const subscription = relay(unruly(end), {
        next: (v) => seen.push(`next ${v}`),
        error: (e: unknown) => seen.push(`error ${(e as Error).message}`),
        complete: () => seen.push('complete'),
      });
      expect(seen).toEqual(['next 1', end === 'complete' ? 'complete' : 'error boom']);
      expect(subscription.closed).toBe(true);
    }
  });

  it('unsubscribing cancels the source and stops the values', () => {
    const source = new Subject<number>();
    const seen: number[] = [];
    let tornDown = false;
    const subscription = relay(
      new Observable<number>((subscriber) => {
        const inner = source.subscribe(subscriber);
        return () => {
          tornDown = true;
          inner.unsubscribe();
        };
      }),
      { next: (v) => seen.push(v), error: () => undefined, complete: () => undefined },
    );
    source.next(1);
    subscription.unsubscribe();
    source.next(2);
    expect(seen).toEqual([1]);
    expect(tornDown).toBe(true);
    expect(source.observed).toBe(false);
  });

  it('tears the source down once it has ended', () => {
    let tornDown = 0;
    relay(
      new Observable<number>((subscriber) => {
        subscriber.complete();
        return () => tornDown++;
      }),
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    expect(tornDown).toBe(1);
  });
});
