import { existsSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultTools } from '../../src/tools/index.js';
import { findOnPath } from '../../src/tools/search.js';
import { skipGroup } from '../support/skip.js';
import { failureOf, runTool, tempDir, textOf, tree } from './helpers.js';
import type { AnyTool } from '../../src/types/tool.js';

describe('workspace confinement (root set)', () => {
  let base: string;
  let ws: string;
  let remove: () => Promise<void>;
  let tools: Record<string, AnyTool>;
  beforeEach(async () => {
    ({ dir: base, remove } = await tempDir());
    ws = path.join(base, 'ws');
    await tree(base, {
      'outside/secret.txt': 'needle outside\n',
      'ws/inside.txt': 'needle inside\n',
      'ws/sub/deeper.txt': 'deep\n',
    });
    await symlink(path.join(base, 'outside'), path.join(ws, 'out-dir'));
    await symlink(path.join(base, 'outside/secret.txt'), path.join(ws, 'out-file'));
    await symlink(path.join(base, 'outside/not-yet.txt'), path.join(ws, 'dangling'));
    tools = Object.fromEntries(defaultTools({ cwd: ws, root: ws, search: { ripgrep: false } }).map((t) => [t.name, t]));
  });
  afterEach(() => remove());

  const call = (name: string, args: Record<string, unknown>) => runTool(tools[name] as AnyTool, args);

  it.each([
    ['a .. path', '../outside/secret.txt'],
    ['an absolute path', '/etc/hostname'],
    ['a symlinked file', 'out-file'],
    ['a path through a symlinked directory', 'out-dir/secret.txt'],
    ['.. after a subdirectory', 'sub/../../outside/secret.txt'],
  ])('refuses reading %s outside the root', async (_, p) => {
    expect(failureOf(await call('read_file', { path: p }))).toMatch(/is outside the workspace root .*; access denied\./);
  });

  it('refuses writes outside the root, through a dangling symlink too, creating nothing', async () => {
    expect(failureOf(await call('write_file', { path: '../outside/new.txt', content: 'x' }))).toContain('outside the workspace root');
    expect(failureOf(await call('write_file', { path: 'dangling', content: 'x' }))).toContain('outside the workspace root');
    expect(failureOf(await call('write_file', { path: 'out-dir/new/deep.txt', content: 'x' }))).toContain(
      'outside the workspace root',
    );
    expect(existsSync(path.join(base, 'outside/new.txt'))).toBe(false);
    expect(existsSync(path.join(base, 'outside/not-yet.txt'))).toBe(false);
    expect(existsSync(path.join(base, 'outside/new'))).toBe(false);
  });

  it('refuses edits, listings and searches outside the root', async () => {
    expect(failureOf(await call('edit_file', { path: 'out-file', oldText: 'needle', newText: 'pin' }))).toContain(
      'outside the workspace root',
    );
    expect(failureOf(await call('list_files', { path: '..' }))).toContain('outside the workspace root');
    expect(failureOf(await call('search', { pattern: 'needle', path: '../outside' }))).toContain('outside the workspace root');
  });

  it('allows paths that stay inside, however they are spelled', async () => {
    expect(textOf((await call('read_file', { path: 'sub/../inside.txt' })).result)).toBe('   1 | needle inside');
    expect(textOf((await call('read_file', { path: path.join(ws, 'sub/deeper.txt') })).result)).toBe('   1 | deep');
    expect((await call('write_file', { path: 'new/dir/file.txt', content: 'ok' })).error).toBeUndefined();
  });

  it('leaves symlinks that lead outside out of listings and searches', async () => {
    const listing = textOf((await call('list_files', {})).result);
    expect(listing).not.toMatch(/out-dir|out-file|secret/);
    expect(listing).toContain('inside.txt');
    expect(textOf((await call('search', { pattern: 'needle' })).result)).toBe('inside.txt:1: needle inside');
  });

  it.skipIf(skipGroup('paths: ripgrep through symlinks', !findOnPath('rg') && 'ripgrep (rg) not on PATH'))('drops matches ripgrep finds through symlinks that lead outside', async () => {
    const search = defaultTools({ cwd: ws, root: ws }).find((t) => t.name === 'search') as AnyTool;
    const run = await runTool(search, { pattern: 'needle' });
    expect(run.result?.details).toMatchObject({ engine: 'ripgrep' });
    expect(textOf(run.result)).toBe('inside.txt:1: needle inside');
  });

  it('refuses to run bash in a working directory outside the root', async () => {
    await mkdir(path.join(base, 'elsewhere'));
    const bash = defaultTools({ cwd: path.join(base, 'elsewhere'), root: ws })[0] as AnyTool;
    expect(failureOf(await runTool(bash, { command: 'true' }))).toContain('outside the workspace root');
  });
});

describe('without a root', () => {
  it('lets paths go anywhere, relative to cwd', async () => {
    const { dir, remove } = await tempDir();
    try {
      await tree(dir, { 'a/here.txt': 'x\n', 'b/there.txt': 'y\n' });
      const read = defaultTools({ cwd: path.join(dir, 'a') })[1] as AnyTool;
      expect(textOf((await runTool(read, { path: '../b/there.txt' })).result)).toBe('   1 | y');
    } finally {
      await remove();
    }
  });
});
