import { describe, expect, it } from 'vitest';
import { parsePartialJson } from '../../src/index.js';

const value = (text: string) => parsePartialJson(text)?.value;

describe('parsePartialJson', () => {
  it('every prefix of a document parses, each a "subset" of the next, and the whole is JSON.parse', () => {
    const doc = '{"name":"Ada \\"the\\" Countess\\u00e9","tags":["a",{"b":[1,2.5e3,-4]}],"ok":true,"none":null,"n":-0.25}';
    const whole = JSON.parse(doc) as unknown;
    let previous: unknown = undefined;
    for (let i = 1; i <= doc.length; i++) {
      const parsed = parsePartialJson(doc.slice(0, i));
      expect(parsed, doc.slice(0, i)).toBeDefined();
      // never a value the document does not have, and never taking back what an earlier prefix showed
      expect(growsInto(parsed!.value, whole), doc.slice(0, i)).toBe(true);
      if (previous !== undefined) expect(growsInto(previous, parsed!.value), doc.slice(0, i)).toBe(true);
      previous = parsed!.value;
    }
    expect(parsePartialJson(doc)).toEqual({ value: JSON.parse(doc), complete: true });
  });

  it('strings cut mid-escape leave the escape out', () => {
    expect(value('{"s":"ab\\')).toEqual({ s: 'ab' });
    expect(value('{"s":"ab\\u00')).toEqual({ s: 'ab' });
    expect(value('{"s":"ab\\u00e9')).toEqual({ s: 'abé' });
    expect(value('{"s":"line\\n')).toEqual({ s: 'line\n' });
    expect(value('{"s":"')).toEqual({ s: '' });
  });

  it('numbers and literals cut at the end are held back until something follows', () => {
    expect(value('{"n":1')).toEqual({});
    expect(value('{"n":18')).toEqual({});
    expect(value('{"n":18,')).toEqual({ n: 18 });
    expect(value('{"n":1.')).toEqual({});
    expect(value('{"n":1.5e')).toEqual({});
    expect(value('{"n":-')).toEqual({});
    expect(value('{"n":-2}')).toEqual({ n: -2 });
    expect(value('{"b":tr')).toEqual({});
    expect(value('{"b":true')).toEqual({});
    expect(value('{"b":true ')).toEqual({ b: true });
    expect(value('{"b":null}')).toEqual({ b: null });
    expect(value('[1,2')).toEqual([1]);
  });

  it('nested arrays and objects cut at any depth keep what arrived; keys without values are left out', () => {
    expect(value('{"rows":[[1,2],[3,')).toEqual({ rows: [[1, 2], [3]] });
    expect(value('{"rows":[[1,2],[')).toEqual({ rows: [[1, 2], []] });
    expect(value('{"a":{"b":{"c":"dee')).toEqual({ a: { b: { c: 'dee' } } });
    expect(value('{"a":[{"x":1},{"y":')).toEqual({ a: [{ x: 1 }, {}] });
    expect(value('{"na')).toEqual({});
    expect(value('{"name"')).toEqual({});
    expect(value('{"name" :')).toEqual({});
    expect(value('{')).toEqual({});
    expect(parsePartialJson('{"a":1}')!.complete).toBe(true);
    expect(parsePartialJson('{"a":1')!.complete).toBe(false);
  });

  it('skips a leading ```json fence, waits while it arrives, and ignores the closing fence', () => {
    expect(parsePartialJson('``')).toBeUndefined();
    expect(parsePartialJson('```json')).toBeUndefined();
    expect(value('```json\n{"a":"b')).toEqual({ a: 'b' });
    expect(parsePartialJson('```json\n{"a":"b"}\n```')).toEqual({ value: { a: 'b' }, complete: true });
  });

  it('text that is not JSON gives undefined, as does nothing at all', () => {
    for (const text of ['', '   ', 'Sure! Here', '{"a" 1}', '{a:1}', '[1 2]', '{"a":01}', '{"s":"\\x"}', '{"a":tru e}']) {
      expect(parsePartialJson(text), text).toBeUndefined();
    }
  });
});

/** `later` is `partial` with more arrived: strings extended, items and members added, the rest equal. */
function growsInto(partial: unknown, later: unknown): boolean {
  if (typeof partial === 'string') return typeof later === 'string' && later.startsWith(partial);
  if (Array.isArray(partial)) {
    if (!Array.isArray(later) || partial.length > later.length) return false;
    return partial.every((item, i) => (i === partial.length - 1 ? growsInto(item, later[i]) : JSON.stringify(item) === JSON.stringify(later[i]) || growsInto(item, later[i])));
  }
  if (partial !== null && typeof partial === 'object') {
    if (later === null || typeof later !== 'object' || Array.isArray(later)) return false;
    return Object.entries(partial).every(([k, v]) => k in later && growsInto(v, (later as Record<string, unknown>)[k]));
  }
  return Object.is(partial, later);
}
