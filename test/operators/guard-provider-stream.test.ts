import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { guardProviderStream, ProviderError } from '../../src/index.js';
import { emptyAssistant } from '../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const partial = emptyAssistant('model', 'prov', 0);
const final = { ...emptyAssistant('model', 'prov', 0), content: [{ type: 'text' as const, text: 'Hi' }] };
const ok = {
  s: { type: 'start', partial },
  t: { type: 'textDelta', contentIndex: 0, delta: 'Hi', partial },
  d: { type: 'done', message: final },
};
const breach = (message: string) => new ProviderError('other', `Provider contract breach: ${message}`);

describe('guardProviderStream', () => {
  it('passes a well-formed stream through unchanged, completing with its done', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-s-t-d|', ok).pipe(guardProviderStream())).toBe('-s-t-(d|)', ok);
    });
  });

  it('completes on done: a second done, a delta and an error after done are ignored; the source drains on its own', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s-t-d-d-t-#', ok);
      expectObservable(source.pipe(guardProviderStream())).toBe('-s-t-(d|)', ok);
      expectSubscriptions(source.subscriptions).toBe('^----------!');
    });
  });

  it('completes on done also when the source never completes', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-s-t-d-', ok).pipe(guardProviderStream()), '^-------!').toBe('-s-t-(d|)', ok);
    });
  });

  it('unsubscribing before done tears the source down', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s-t-d|', ok);
      expectObservable(source.pipe(guardProviderStream()), '^--!').toBe('-s-', ok);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it.each([
    ['null', null, 'event 2 is null'],
    ['undefined', undefined, 'event 2 is undefined'],
    ['a string', 'data: {}', 'event 2 is string "data: {}", not a stream event object'],
    ['an unknown type', { type: 'text', text: 'x' }, 'event 2 has unknown type "text"'],
    ['a delta without its partial', { type: 'textDelta', contentIndex: 0, delta: 'x' }, 'event 2 (textDelta) has no partial assistant message'],
    ['a delta that is not a string', { type: 'textDelta', contentIndex: 0, delta: 5, partial }, 'event 2 (textDelta) has a delta that is not a string'],
    ['a done without a message', { type: 'done' }, 'event 2 (done) has no final assistant message'],
    ['a toolCallStart without a name', { type: 'toolCallStart', contentIndex: 0, id: 'c1', partial }, 'event 2 (toolCallStart) needs a string id and name'],
  ])('fails with a ProviderError naming the breach: %s', (_what, bad, message) => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s-t-x-d|', { ...ok, x: bad });
      expectObservable(source.pipe(guardProviderStream())).toBe('-s-t-#', ok, breach(message));
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });
});
