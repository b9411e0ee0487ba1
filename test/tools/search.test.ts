import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { searchTool } from '../../src/tools/index.js';
import { findOnPath } from '../../src/tools/search.js';
import { skipGroup } from '../support/skip.js';
import type { SearchToolOptions } from '../../src/tools/index.js';
import { failureOf, runTool, tempDir, textOf, tree } from './helpers.js';

const rg = findOnPath('rg');
skipGroup('search with the ripgrep engine (the built-in engine runs)', !rg && 'ripgrep (rg) not on PATH');

const engines: { name: 'builtin' | 'ripgrep'; ripgrep: SearchToolOptions['ripgrep']; skip: boolean }[] = [
  { name: 'builtin', ripgrep: false, skip: false },
  { name: 'ripgrep', ripgrep: 'auto', skip: !rg },
];

describe.each(engines)('search tool ($name engine)', ({ name, ripgrep, skip }) => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    await tree(dir, {
      'src/app.ts': 'import x from "y";\nconst needle = 1;\nexport default needle;\n',
      'src/util.js': 'function Needle() {}\n',
      'README.md': 'Find the needle here.\nliteral a.b( text\naxb(\n',
    });
  });
  afterEach(() => remove());

  const search = (args: Record<string, unknown>, options: Partial<SearchToolOptions> = {}) =>
    runTool(searchTool({ cwd: dir, ripgrep, ...options }), args);

  it.skipIf(skip)('returns path:line: text for each match, sorted by path, with the engine in details', async () => {
    const run = await search({ pattern: 'needle' });
    expect(textOf(run.result)).toBe(
      ['README.md:1: Find the needle here.', 'src/app.ts:2: const needle = 1;', 'src/app.ts:3: export default needle;'].join('\n'),
    );
    expect(run.result?.details).toMatchObject({ matches: 3, truncated: false, engine: name });
    expect(run.progress).toEqual(['Searching for "needle"']);
  });

  it.skipIf(skip)('says "No matches found" when nothing matches', async () => {
    expect(textOf((await search({ pattern: 'haystack' })).result)).toBe('No matches found');
  });

  it.skipIf(skip)('matches case-insensitively on request', async () => {
    const text = textOf((await search({ pattern: 'NEEDLE', ignoreCase: true })).result);
    expect(text.split('\n')).toHaveLength(4);
    expect(text).toContain('src/util.js:1: function Needle() {}');
  });

  it.skipIf(skip)('treats the pattern as plain text in literal mode', async () => {
    expect(textOf((await search({ pattern: 'a.b(', literal: true })).result)).toBe('README.md:2: literal a.b( text');
    expect(textOf((await search({ pattern: 'a.b\\(' })).result)).toBe('README.md:2: literal a.b( text\nREADME.md:3: axb(');
  });

  it.skipIf(skip)('reports an invalid regular expression as an error', async () => {
    expect(failureOf(await search({ pattern: 'a.b(' }))).toMatch(/regex|regular expression/i);
  });

  it.skipIf(skip)('limits results (50 by default) and says when it cut them', async () => {
    await tree(dir, { 'many.txt': 'hit\n'.repeat(70) });
    const run = await search({ pattern: '^hit$' });
    const lines = textOf(run.result).split('\n');
    expect(lines.filter((l) => l.startsWith('many.txt:'))).toHaveLength(50);
    expect(lines.at(-1)).toBe('[Results truncated at 50 matches; narrow the pattern, path or glob to see the rest.]');
    const three = await search({ pattern: '^hit$', maxResults: 3 });
    expect(textOf(three.result)).toBe(
      'many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n\n[Results truncated at 3 matches; narrow the pattern, path or glob to see the rest.]',
    );
    expect(three.result?.details).toMatchObject({ matches: 3, truncated: true });
  });

  it.skipIf(skip)('searches under a path, or a single file, and filters by glob', async () => {
    expect(textOf((await search({ pattern: 'needle', path: 'src' })).result)).toBe(
      'src/app.ts:2: const needle = 1;\nsrc/app.ts:3: export default needle;',
    );
    expect(textOf((await search({ pattern: 'needle', path: 'README.md' })).result)).toBe('README.md:1: Find the needle here.');
    expect(textOf((await search({ pattern: 'eedle', glob: '*.js', ignoreCase: true })).result)).toBe(
      'src/util.js:1: function Needle() {}',
    );
  });

  it.skipIf(skip)('honours .gitignore, skips .git and binary files, includes hidden files', async () => {
    await tree(dir, {
      '.gitignore': 'dist/\n*.gen.ts\n',
      'dist/bundle.js': 'needle',
      'src/types.gen.ts': 'needle',
      '.git/config': 'needle',
      '.env': 'needle=1',
      'blob.bin': Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2, 0])]),
    });
    const text = textOf((await search({ pattern: 'needle' })).result);
    expect(text).toContain('.env:1: needle=1');
    expect(text).not.toMatch(/dist|gen\.ts|\.git\/|blob\.bin/);
    const all = textOf((await search({ pattern: 'needle' }, { gitignore: false })).result);
    expect(all).toContain('dist/bundle.js:1: needle');
    expect(all).not.toContain('.git/config');
  });

  it.skipIf(skip)('never loops on circular symlinks', async () => {
    await symlink('..', path.join(dir, 'src/up'));
    await symlink(path.join(dir, 'cycle-b'), path.join(dir, 'cycle-a'));
    await symlink(path.join(dir, 'cycle-a'), path.join(dir, 'cycle-b'));
    const run = await search({ pattern: 'function Needle' });
    expect(textOf(run.result)).toBe('src/util.js:1: function Needle() {}');
  });

  it.skipIf(skip)('cuts very long matching lines', async () => {
    await tree(dir, { 'wide.txt': `needle${'x'.repeat(1000)}` });
    const text = textOf((await search({ pattern: 'needle', path: 'wide.txt' }, { maxLineLength: 20 })).result);
    expect(text).toBe(`wide.txt:1: needle${'x'.repeat(14)}… [line cut]`);
  });

  it.skipIf(skip)('reports a missing path clearly', async () => {
    expect(failureOf(await search({ pattern: 'x', path: 'nowhere' }))).toBe('Path not found: nowhere');
  });

  it.skipIf(skip)('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const run = await runTool(searchTool({ cwd: dir, ripgrep }), { pattern: 'needle' }, controller.signal);
    expect(failureOf(run)).toBe('Search aborted');
  });
});

describe('search tool engine choice', () => {
  it('falls back to the built-in search when asked to, and runs a given rg binary otherwise', async () => {
    const { dir, remove } = await tempDir();
    try {
      await tree(dir, { 'a.txt': 'needle\n' });
      const forced = await runTool(searchTool({ cwd: dir, ripgrep: false }), { pattern: 'needle' });
      expect(forced.result?.details).toMatchObject({ engine: 'builtin' });
      const missing = await runTool(searchTool({ cwd: dir, ripgrep: path.join(dir, 'no-rg') }), { pattern: 'needle' });
      expect(failureOf(missing)).toContain('Cannot run ripgrep');
    } finally {
      await remove();
    }
  });
});
