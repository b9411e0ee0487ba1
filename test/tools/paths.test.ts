import { existsSync } from 'node:fs';
import { mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultTools, resolvePath, workspace } from '../../src/tools/index.js';
import { ToolError } from '../../src/types/errors.js';
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

describe('resolvePath: roots that do not exist, and paths that do not resolve', () => {
  let base: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir: base, remove } = await tempDir());
    await tree(base, { 'outside/secret.txt': 'secret\n', 'real/': '', 'ws/inside.txt': 'x\n' });
  });
  afterEach(() => remove());

  const refusal = (p: Promise<string>) => p.then(() => 'resolved', (e: unknown) => e);

  it('confines to a root that does not exist (yet) as to any other', async () => {
    const ws = workspace({ cwd: path.join(base, 'missing/ws'), root: '.' });
    const error = await refusal(resolvePath(ws, '../../outside/secret.txt'));
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ kind: 'failed', message: expect.stringMatching(/is outside the workspace root .*missing.ws; access denied\./) });
    await expect(resolvePath(ws, path.join(base, 'outside/secret.txt'))).rejects.toThrow(/outside the workspace root/);
    await expect(resolvePath(ws, 'new/file.txt')).resolves.toBe(path.join(base, 'missing/ws/new/file.txt'));
  });

  it('a root that does not exist below a symlinked directory admits its own files, before and after it is created', async () => {
    await symlink(path.join(base, 'real'), path.join(base, 'link'));
    const root = path.join(base, 'link/ws');
    const write = defaultTools({ cwd: root, root }).find((t) => t.name === 'write_file') as AnyTool;
    expect(failureOf(await runTool(write, { path: 'a.txt', content: 'a' }))).toBe('');
    expect(existsSync(path.join(base, 'real/ws/a.txt'))).toBe(true);
    expect(failureOf(await runTool(write, { path: 'b.txt', content: 'b' }))).toBe('');
    expect(failureOf(await runTool(write, { path: '../../outside/new.txt', content: 'x' }))).toContain('outside the workspace root');
    expect(existsSync(path.join(base, 'outside/new.txt'))).toBe(false);
  });

  it('a root that cannot be resolved refuses every path with a ToolError naming it', async () => {
    await symlink(path.join(base, 'loop-b'), path.join(base, 'loop-a'));
    await symlink(path.join(base, 'loop-a'), path.join(base, 'loop-b'));
    const ws = workspace({ cwd: base, root: 'loop-a' });
    await expect(resolvePath(ws, 'ws/inside.txt')).rejects.toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(/^Cannot resolve the workspace root .*loop-a: ELOOP/),
      cause: expect.objectContaining({ code: 'ELOOP' }),
    });
  });

  it('a custom Workspace whose root has no real location refuses every path', async () => {
    const ws = { cwd: base, root: path.join(base, 'ws'), realRoot: async () => undefined };
    await expect(resolvePath(ws, 'ws/inside.txt')).rejects.toMatchObject({ kind: 'failed', message: expect.stringMatching(/has no real location; access denied/) });
  });

  it('fixes the real root at first use: re-pointing a symlinked root later does not move the confinement', async () => {
    await symlink(path.join(base, 'ws'), path.join(base, 'root-link'));
    const ws = workspace({ cwd: path.join(base, 'root-link'), root: '.' });
    await expect(resolvePath(ws, 'inside.txt')).resolves.toBe(path.join(base, 'root-link/inside.txt'));
    await rm(path.join(base, 'root-link'));
    await symlink(path.join(base, 'outside'), path.join(base, 'root-link'));
    await expect(resolvePath(ws, 'secret.txt')).rejects.toThrow(/outside the workspace root/);
  });

  it('an unconfined workspace has no root', () => {
    expect(workspace({ cwd: base })).not.toHaveProperty('root');
    expect(workspace({ cwd: base, root: 'ws' })).toHaveProperty('root', path.join(base, 'ws'));
  });

  it('reports resolve errors other than "not found" (a symlink loop, a file used as a directory) as ToolErrors', async () => {
    const ws = workspace({ cwd: path.join(base, 'ws'), root: '.' });
    await symlink('loop-2', path.join(base, 'ws/loop-1'));
    await symlink('loop-1', path.join(base, 'ws/loop-2'));
    await expect(resolvePath(ws, 'loop-1')).rejects.toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(/^Cannot resolve path "loop-1": ELOOP/),
      cause: expect.objectContaining({ code: 'ELOOP' }),
    });
    await expect(resolvePath(ws, 'inside.txt/child')).rejects.toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(/^Cannot resolve path "inside.txt\/child": ENOTDIR/),
    });
  });

  it('follows at most 40 dangling symlinks in a row, like the kernel, then refuses', async () => {
    const ws = workspace({ cwd: path.join(base, 'ws'), root: '.' });
    // hop-i -> missing/../hop-(i+1): realpath fails with ENOENT at "missing", so each link is followed by hand.
    const chain = async (name: string, links: number) => {
      for (let i = 0; i < links; i++) {
        const next = i === links - 1 ? `${name}-target` : `${name}-${i + 1}`;
        await symlink(`missing/../${next}`, path.join(base, 'ws', `${name}-${i}`));
      }
    };
    await chain('forty', 40);
    await chain('too-many', 41);
    await expect(resolvePath(ws, 'forty-0')).resolves.toBe(path.join(base, 'ws/forty-0'));
    await expect(resolvePath(ws, 'too-many-0')).rejects.toMatchObject({
      kind: 'failed',
      message: 'Cannot resolve path "too-many-0": too many levels of symbolic links',
    });
  });
});
