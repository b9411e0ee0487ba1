import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool, writeFileTool } from '../../src/tools/index.js';
import { failureOf, runTool, tempDir, textOf } from './helpers.js';

describe('write_file tool', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ dir, remove } = await tempDir()));
  afterEach(() => remove());

  it('creates a file and its missing parent directories', async () => {
    const run = await runTool(writeFileTool({ cwd: dir }), { path: 'a/b/c/new.txt', content: 'héllo\n' });
    expect(textOf(run.result)).toBe('Wrote 7 B to a/b/c/new.txt (new file)');
    expect(run.result?.details).toEqual({ path: 'a/b/c/new.txt', bytes: 7, created: true });
    expect(await readFile(path.join(dir, 'a/b/c/new.txt'), 'utf8')).toBe('héllo\n');
  });

  it('overwrites an existing file', async () => {
    await writeFile(path.join(dir, 'f.txt'), 'old content that is longer');
    const run = await runTool(writeFileTool({ cwd: dir }), { path: 'f.txt', content: 'new' });
    expect(textOf(run.result)).toBe('Wrote 3 B to f.txt');
    expect(await readFile(path.join(dir, 'f.txt'), 'utf8')).toBe('new');
  });

  it('refuses to write over a directory', async () => {
    await mkdir(path.join(dir, 'sub'));
    const run = await runTool(writeFileTool({ cwd: dir }), { path: 'sub', content: 'x' });
    expect(failureOf(run)).toBe('Cannot write sub: it is a directory.');
    expect((await stat(path.join(dir, 'sub'))).isDirectory()).toBe(true);
  });

  it('requires content at validation', async () => {
    expect((await runTool(writeFileTool({ cwd: dir }), { path: 'x' })).invalid).toContain('arguments.content');
  });
});

describe('edit_file tool', () => {
  let dir: string;
  let remove: () => Promise<void>;
  let file: string;
  const original = 'alpha\nbeta\ngamma\nbeta\n';
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    file = path.join(dir, 'code.txt');
    await writeFile(file, original);
  });
  afterEach(() => remove());

  const edit = (oldText: string, newText: string) => runTool(editFileTool({ cwd: dir }), { path: 'code.txt', oldText, newText });

  it('replaces the one exact match', async () => {
    const run = await edit('gamma\n', 'GAMMA\ndelta\n');
    expect(textOf(run.result)).toBe('Replaced 1 occurrence in code.txt at line 3.');
    expect(run.result?.details).toMatchObject({ line: 3 });
    expect(await readFile(file, 'utf8')).toBe('alpha\nbeta\nGAMMA\ndelta\nbeta\n');
  });

  it('inserts replacement text literally ($& and $1 are not patterns)', async () => {
    await edit('alpha', 'cost: $& and $1');
    expect(await readFile(file, 'utf8')).toBe('cost: $& and $1\nbeta\ngamma\nbeta\n');
  });

  it('refuses an ambiguous match and leaves the file untouched', async () => {
    const run = await edit('beta', 'BETA');
    expect(failureOf(run)).toBe(
      'oldText occurs 2 times in code.txt (lines 2, 4). Include more surrounding text so it matches exactly once. The file was not changed.',
    );
    expect(await readFile(file, 'utf8')).toBe(original);
  });

  it('counts overlapping occurrences as ambiguous', async () => {
    await writeFile(file, 'aaa');
    expect(failureOf(await edit('aa', 'b'))).toContain('occurs 2 times');
    expect(await readFile(file, 'utf8')).toBe('aaa');
  });

  it('refuses a missing match and leaves the file untouched', async () => {
    const run = await edit('  alpha', 'x');
    expect(failureOf(run)).toContain('oldText was not found in code.txt');
    expect(failureOf(run)).toContain('The file was not changed.');
    expect(await readFile(file, 'utf8')).toBe(original);
  });

  it('refuses empty old text and leaves the file untouched', async () => {
    expect(failureOf(await edit('', 'x'))).toBe('oldText must not be empty.');
    expect(await readFile(file, 'utf8')).toBe(original);
  });

  it('matches LF text against a CRLF file and keeps its line ends', async () => {
    await writeFile(file, 'one\r\ntwo\r\nthree\r\n');
    const run = await edit('one\ntwo\n', 'uno\ndos\n');
    expect(run.error).toBeUndefined();
    expect(await readFile(file, 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('reports a missing file clearly', async () => {
    const run = await runTool(editFileTool({ cwd: dir }), { path: 'nope.txt', oldText: 'a', newText: 'b' });
    expect(failureOf(run)).toBe('File not found: nope.txt');
  });

  it('refuses binary files', async () => {
    await writeFile(file, Buffer.from([0x61, 0x00, 0x62]));
    expect(failureOf(await edit('a', 'c'))).toBe('Cannot edit code.txt: it is a binary file.');
  });
});
