import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { isEvent, latestPerFrame, textDeltas } from '../../src/index.js';
import { runEvents } from './fixtures.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('textDeltas()', () => {
  it('emits just the text of text deltas (marbles)', () => {
    const { ev } = runEvents();
    const thinking = { ...ev.u!, delta: { type: 'thinking' as const, contentIndex: 0, delta: 'hmm' } };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('AMuhvcdmZ|', { ...ev, h: thinking }).pipe(textDeltas())).toBe('--a-b----|', { a: 'Hel', b: 'lo' });
    });
  });
});

describe('latestPerFrame()', () => {
  it('coalesces a burst into its last value on the next frame (marbles)', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      expectObservable(cold('-abc-------d-ef-----|').pipe(latestPerFrame(s, 4))).toBe('-----c---------f----|');
    });
  });

  it('never drops the final value: a waiting value is emitted before completion and before an error', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      expectObservable(cold('-ab|').pipe(latestPerFrame(s, 10))).toBe('---(b|)');
      expectObservable(cold('-ab#').pipe(latestPerFrame(s, 10))).toBe('---(b#)');
    });
  });

  it('on Node (no animation frames) it defaults to timers and still delivers the last value', async () => {
    const { lastValueFrom, of, toArray } = await import('rxjs');
    expect(await lastValueFrom(of(1, 2, 3).pipe(latestPerFrame(), toArray()))).toEqual([3]);
  });

  it('unsubscribing cancels the scheduled frame', () => {
    const s = scheduler();
    s.run(({ cold, expectObservable }) => {
      expectObservable(cold('-ab---|').pipe(latestPerFrame(s, 10)), '^-!').toBe('---');
    });
  });
});

describe('isEvent(type)', () => {
  it('is a type guard that narrows a filter to one event type', () => {
    const { ev } = runEvents();
    const updates = Object.values(ev).filter(isEvent('MessageUpdate'));
    expect(updates.map((e) => e.delta.contentIndex)).toEqual([0, 0, 1, 1]);
  });
});
