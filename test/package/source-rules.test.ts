import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Two rules of the source tree that a type-check does not see: the public RxJS API only (`rxjs/internal/*` is no
// stable contract across RxJS versions), and no file over 400 lines.
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.(ts|tsx|js|mjs)$/.test(entry.name) ? [file] : [];
  });
}

describe('the source tree', () => {
  const files = sourceFiles(src);

  it('has files to check', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('imports no rxjs/internal module', () => {
    const offenders = files.filter((file) => /['"]rxjs\/internal/.test(readFileSync(file, 'utf8'))).map((file) => path.relative(src, file));
    expect(offenders).toEqual([]);
  });

  it('has no file over 400 lines', () => {
    const long = files
      .map((file) => ({ file: path.relative(src, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > 400);
    expect(long).toEqual([]);
  });
});
