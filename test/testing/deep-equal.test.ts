import { describe, expect, it } from 'vitest';
import { of } from 'rxjs';
import { agentTestScheduler, assertDeepEqual, firstDifference } from '../../src/testing/index.js';

describe('assertDeepEqual (no node:assert, runs in browsers)', () => {
  it('names the first differing path', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBeUndefined();
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe('$.a[1].b');
    expect(firstDifference({ a: 1 }, { a: 1, c: undefined })).toBe('$.c');
    expect(firstDifference([1], { 0: 1 })).toBe('$');
    expect(firstDifference(NaN, NaN)).toBeUndefined();
    expect(() => assertDeepEqual({ x: 'a' }, { x: 'b' })).toThrow(/values differ at \$\.x/);
  });

  it('agentTestScheduler fails a marble assertion that does not hold, and passes one that does', () => {
    agentTestScheduler().run(({ expectObservable }) => expectObservable(of('a', 'b')).toBe('(ab|)'));
    expect(() => agentTestScheduler().run(({ expectObservable }) => expectObservable(of('a')).toBe('(b|)'))).toThrow(/values differ/);
  });
});
