import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileTool } from '../../src/tools/index.js';
import { failureOf, runTool, tempDir, textOf } from './helpers.js';

const PNG_HEADER = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

describe('read_file tool', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    await writeFile(path.join(dir, 'five.txt'), 'first\nsecond\nthird\nfourth\nfifth\n');
  });
  afterEach(() => remove());

  const read = (args: Record<string, unknown>, options = {}) => runTool(readFileTool({ cwd: dir, ...options }), args);

  it('shows text with a 1-based line-number gutter', async () => {
    const run = await read({ path: 'five.txt' });
    expect(textOf(run.result)).toBe('   1 | first\n   2 | second\n   3 | third\n   4 | fourth\n   5 | fifth');
    expect(run.result?.details).toMatchObject({ firstLine: 1, lastLine: 5, totalLines: 5 });
    expect(run.progress).toEqual(['Reading file: five.txt']);
  });

  it('reads a range with a 1-based offset and a limit, and says how to continue', async () => {
    const run = await read({ path: 'five.txt', offset: 2, limit: 2 });
    expect(textOf(run.result)).toBe('   2 | second\n   3 | third\n\n[Showing lines 2-3 of 5. Use offset=4 to read more.]');
  });

  it('reads to the end from an offset', async () => {
    const run = await read({ path: path.join(dir, 'five.txt'), offset: 5 });
    expect(textOf(run.result)).toBe('   5 | fifth');
  });

  it('refuses an offset past the end of the file', async () => {
    const run = await read({ path: 'five.txt', offset: 6 });
    expect(failureOf(run)).toBe('Offset 6 is beyond the end of the file (5 lines).');
  });

  it('rejects offset 0 at validation (offsets are 1-based)', async () => {
    expect((await read({ path: 'five.txt', offset: 0 })).invalid).toContain('arguments.offset');
  });

  it('widens the gutter for long files and caps lines per call', async () => {
    const lines = Array.from({ length: 12_000 }, (_, i) => `line ${i + 1}`);
    await writeFile(path.join(dir, 'long.txt'), lines.join('\n'));
    const run = await read({ path: 'long.txt', offset: 9_999, limit: 2 });
    expect(textOf(run.result)).toBe(' 9999 | line 9999\n10000 | line 10000\n\n[Showing lines 9999-10000 of 12000. Use offset=10001 to read more.]');
    const capped = await read({ path: 'long.txt' }, { maxLines: 100 });
    expect(textOf(capped.result)).toContain('[Showing lines 1-100 of 12000. Use offset=101 to read more.]');
  });

  it('keeps the text returned under the byte cap, reading large files only as far as needed', async () => {
    const line = 'y'.repeat(99);
    await writeFile(path.join(dir, 'big.txt'), `${line}\n`.repeat(50_000)); // 5 MB
    const run = await read({ path: 'big.txt', offset: 20_000, limit: 3 }, { maxBytes: 64 * 1024 });
    expect(textOf(run.result)).toBe(
      `20000 | ${line}\n20001 | ${line}\n20002 | ${line}\n\n[Showing lines 20000-20002 of a 4.8 MB file. Use offset=20003 to read more.]`,
    );
    const whole = await read({ path: 'big.txt' }, { maxBytes: 64 * 1024 });
    const text = textOf(whole.result);
    expect(Buffer.byteLength(text)).toBeLessThan(64 * 1024 + 200);
    expect(text).toMatch(/\[Showing lines 1-\d+ of a 4\.8 MB file \(output limit 64 KB reached\)\. Use offset=\d+ to read more\.\]$/);
    const past = await read({ path: 'big.txt', offset: 50_001 }, { maxBytes: 64 * 1024 });
    expect(failureOf(past)).toBe('Offset 50001 is beyond the end of the file (50000 lines).');
  });

  it('cuts very long lines with a marker', async () => {
    await writeFile(path.join(dir, 'wide.txt'), 'z'.repeat(5000));
    const run = await read({ path: 'wide.txt' }, { maxLineLength: 10 });
    expect(textOf(run.result)).toBe('   1 | zzzzzzzzzz… [line cut: 5000 characters]');
  });

  it('says when a file is empty', async () => {
    await writeFile(path.join(dir, 'empty.txt'), '');
    expect(textOf((await read({ path: 'empty.txt' })).result)).toBe('(empty.txt is empty)');
  });

  it('handles CRLF line ends', async () => {
    await writeFile(path.join(dir, 'dos.txt'), 'a\r\nb\r\n');
    expect(textOf((await read({ path: 'dos.txt' })).result)).toBe('   1 | a\n   2 | b');
  });

  it('returns images as image content, recognised by their bytes', async () => {
    const bytes = Buffer.concat([PNG_HEADER, Buffer.from('rest-of-png')]);
    await writeFile(path.join(dir, 'picture.dat'), bytes);
    const run = await read({ path: 'picture.dat' });
    expect(run.result?.content[1]).toEqual({ type: 'image', mimeType: 'image/png', data: bytes.toString('base64') });
    expect(textOf(run.result)).toContain('Image file picture.dat (image/png');
  });

  it.each([
    ['jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), 'image/jpeg'],
    ['gif', Buffer.from('GIF89a\x01\x00', 'latin1'), 'image/gif'],
    ['webp', Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 ')]), 'image/webp'],
  ])('recognises %s', async (name, bytes, mimeType) => {
    await writeFile(path.join(dir, `image.${name}`), bytes);
    const run = await read({ path: `image.${name}` });
    expect(run.result?.content[1]).toMatchObject({ type: 'image', mimeType });
  });

  it('refuses images above the image cap', async () => {
    await writeFile(path.join(dir, 'huge.png'), Buffer.concat([PNG_HEADER, Buffer.alloc(4096)]));
    const run = await read({ path: 'huge.png' }, { maxImageBytes: 1024 });
    expect(failureOf(run)).toBe('Image huge.png is too large (4 KB; the limit is 1 KB).');
  });

  it('detects binary files and refuses them clearly', async () => {
    await writeFile(path.join(dir, 'blob.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00]));
    const run = await read({ path: 'blob.bin' });
    expect(failureOf(run)).toBe('Cannot read blob.bin: it is a binary file (8 B), not text.');
    await writeFile(path.join(dir, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // "café" in Latin-1
    expect(failureOf(await read({ path: 'latin1.txt' }))).toContain('binary file');
  });

  it('reads UTF-8 text whose multi-byte character straddles the sniffed prefix', async () => {
    const content = `${'a'.repeat(8191)}é\n`;
    await writeFile(path.join(dir, 'utf8.txt'), content);
    const shown = textOf((await read({ path: 'utf8.txt' }, { maxLineLength: 10_000 })).result);
    expect(shown.length).toBe(7 + 8192);
    expect(shown.endsWith('aé')).toBe(true);
  });

  it('reports missing files and directories clearly', async () => {
    expect(failureOf(await read({ path: 'nope.txt' }))).toBe('File not found: nope.txt');
    await mkdir(path.join(dir, 'sub'));
    expect(failureOf(await read({ path: 'sub' }))).toBe('sub is a directory; use list_files to see its contents.');
  });
});
