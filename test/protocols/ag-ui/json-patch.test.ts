import { describe, expect, it } from 'vitest';
import { applyPatch } from 'fast-json-patch';
import { jsonPatch } from '../../../src/protocols/ag-ui/index.js';

describe('jsonPatch', () => {
  it('writes adds, removes and replaces key by key, and replaces arrays whole', () => {
    expect(jsonPatch({ a: 1, b: { c: 2, gone: true }, list: [1] }, { a: 1, b: { c: 3 }, list: [1, 2], d: 'new' })).toEqual([
      { op: 'remove', path: '/b/gone' },
      { op: 'replace', path: '/b/c', value: 3 },
      { op: 'replace', path: '/list', value: [1, 2] },
      { op: 'add', path: '/d', value: 'new' },
    ]);
  });

  it('is empty for equal values and escapes ~ and / in keys', () => {
    expect(jsonPatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
    expect(jsonPatch({}, { 'a/b~c': 1 })).toEqual([{ op: 'add', path: '/a~1b~0c', value: 1 }]);
  });

  it('turns the one value into the other when applied (fast-json-patch, what AG-UI\'s client applies STATE_DELTA with)', () => {
    const pairs: Array<[unknown, unknown]> = [
      [{ todo: ['a'], done: 0, meta: { by: 'x' } }, { todo: ['a', 'b'], done: 1, meta: {} }],
      [{ n: 1 }, { n: null, m: { deep: { x: [1] } } }],
      [{ a: 1 }, 'not an object'],
    ];
    for (const [from, to] of pairs) {
      expect(applyPatch(structuredClone(from), jsonPatch(from, to) as never, false, false).newDocument).toEqual(to);
    }
  });
});
