import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listFilesTool } from '../../src/tools/index.js';
import { failureOf, runTool, tempDir, textOf, tree } from './helpers.js';

describe('list_files tool', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ dir, remove } = await tempDir()));
  afterEach(() => remove());

  const list = (args: Record<string, unknown> = {}, options = {}) => runTool(listFilesTool({ cwd: dir, ...options }), args);

  it('lists a tree sorted by path, directories with a trailing slash', async () => {
    await tree(dir, { 'b.txt': '', 'a/z.txt': '', 'a/m/n.txt': '', 'a.md': '', 'empty/': '' });
    const run = await list();
    expect(textOf(run.result)).toBe(['a/', 'a/m/', 'a/m/n.txt', 'a/z.txt', 'a.md', 'b.txt', 'empty/'].join('\n'));
    expect(run.result?.details).toMatchObject({ entries: 7, truncated: false, depth: 3 });
    expect(run.progress).toEqual(['Listing: .']);
  });

  it('bounds the depth: 1 is the directory itself, 3 by default', async () => {
    await tree(dir, { 'l1/l2/l3/l4/deep.txt': '', 'top.txt': '' });
    expect(textOf((await list({ depth: 1 })).result)).toBe('l1/\ntop.txt');
    expect(textOf((await list()).result)).toBe('l1/\nl1/l2/\nl1/l2/l3/\ntop.txt');
    expect(textOf((await list({ depth: 10 })).result)).toContain('l1/l2/l3/l4/deep.txt');
  });

  it('lists a subdirectory relative to itself', async () => {
    await tree(dir, { 'src/index.ts': '', 'src/tools/bash.ts': '' });
    expect(textOf((await list({ path: 'src' })).result)).toBe('index.ts\ntools/\ntools/bash.ts');
  });

  it('stops at the entry limit, shallow levels first, and says so', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 5; i++) files[`dir${i}/inner${i}.txt`] = '';
    for (let i = 0; i < 5; i++) files[`file${i}.txt`] = '';
    await tree(dir, files);
    const run = await list({}, { maxEntries: 12 });
    const lines = textOf(run.result).split('\n');
    // All 10 top-level entries survive; only 2 of the 5 nested files fit.
    expect(lines.filter((l) => /^(dir\d\/|file\d\.txt)$/.test(l))).toHaveLength(10);
    expect(lines.filter((l) => l.includes('inner'))).toHaveLength(2);
    expect(lines.at(-1)).toBe('[Listing truncated at 12 entries; list a subdirectory or lower the depth to see more.]');
    expect(run.result?.details).toMatchObject({ entries: 12, truncated: true });
  });

  it('defaults to 200 entries', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 250; i++) files[`f${String(i).padStart(3, '0')}`] = '';
    await tree(dir, files);
    expect((await list()).result?.details).toMatchObject({ entries: 200, truncated: true });
  });

  it('leaves out what .gitignore ignores, nested files and negation included, and .git itself', async () => {
    await tree(dir, {
      '.gitignore': '# build output\nnode_modules/\n*.log\n!keep.log\n',
      '.git/HEAD': 'ref',
      'node_modules/pkg/index.js': '',
      'app.log': '',
      'keep.log': '',
      'src/.gitignore': 'generated.ts\n',
      'src/generated.ts': '',
      'src/main.ts': '',
      '.env': 'SECRET=1',
    });
    const text = textOf((await list()).result);
    expect(text).toBe(['.env', '.gitignore', 'keep.log', 'src/', 'src/.gitignore', 'src/main.ts'].join('\n'));
    const all = textOf((await list({}, { gitignore: false })).result);
    expect(all).toContain('node_modules/pkg/index.js');
    expect(all).toContain('app.log');
    expect(all).not.toContain('.git/');
  });

  it('honours the .gitignore files of enclosing directories inside a git repository', async () => {
    await tree(dir, { 'repo/.git/HEAD': '', 'repo/.gitignore': '*.log\n', 'repo/pkg/a.log': '', 'repo/pkg/a.ts': '' });
    expect(textOf((await list({ path: 'repo/pkg' })).result)).toBe('a.ts');
    // Outside a repository a parent's .gitignore does not apply, as in git.
    await tree(dir, { 'plain/.gitignore': '*.log\n', 'plain/pkg/a.log': '', 'plain/pkg/a.ts': '' });
    expect(textOf((await list({ path: 'plain/pkg' })).result)).toBe('a.log\na.ts');
  });

  it('never loops on circular symlinks', async () => {
    await tree(dir, { 'a/file.txt': '', 'b/other.txt': '' });
    await symlink('..', path.join(dir, 'a/up'));
    await symlink('.', path.join(dir, 'b/self'));
    await symlink(path.join(dir, 'loop2'), path.join(dir, 'loop1'));
    await symlink(path.join(dir, 'loop1'), path.join(dir, 'loop2'));
    const run = await list({ depth: 10 });
    expect(textOf(run.result)).toBe(
      [
        'a/',
        'a/file.txt',
        'a/up/ (already listed through another path; not followed)',
        'b/',
        'b/other.txt',
        'b/self/ (already listed through another path; not followed)',
        'loop1 (symlink)',
        'loop2 (symlink)',
      ].join('\n'),
    );
  });

  it('follows a symlink to a directory once', async () => {
    await tree(dir, { 'real/x.txt': '' });
    await symlink(path.join(dir, 'real'), path.join(dir, 'alias'));
    await symlink(path.join(dir, 'real/x.txt'), path.join(dir, 'x-link'));
    const text = textOf((await list()).result);
    expect(text).toBe(
      ['alias/ (symlink)', 'alias/x.txt', 'real/ (already listed through another path; not followed)', 'x-link (symlink)'].join(
        '\n',
      ),
    );
  });

  it('reports an empty directory, a file and a missing path clearly', async () => {
    await tree(dir, { 'empty/': '', 'f.txt': '' });
    expect(textOf((await list({ path: 'empty' })).result)).toBe('(empty is empty)');
    expect(failureOf(await list({ path: 'f.txt' }))).toBe('f.txt is a file, not a directory; use read_file to read it.');
    expect(failureOf(await list({ path: 'missing' }))).toBe('Directory not found: missing');
  });
});
