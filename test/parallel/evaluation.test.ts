import { describe, expect, it } from 'vitest';
import { parseChoice } from '../../src/parallel/evaluation.js';

describe('parseChoice (the judge reply)', () => {
  it.each([
    ['2', 3, 2],
    [' 1\n', 3, 1],
    ['Response 3.', 3, 3],
    ['**2**', 2, 2],
    ['The best is response 2; response 2 is correct.', 3, 2],
  ])('%j of %i responses names %i', (reply, n, expected) => {
    expect(parseChoice(reply, n)).toBe(expected);
  });

  it.each([
    ['', 3],
    ['They are all lovely.', 3],
    ['either 1 or 3', 3],
    ['7', 3],
    ['0', 3],
  ])('%j of %i responses names none', (reply, n) => {
    expect(parseChoice(reply, n)).toBeUndefined();
  });
});
