import { createReadStream } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { createInterface } from 'node:readline';
import { ToolError } from '../types/errors.js';
import { image, text } from '../types/content.js';
import type { Tool, ToolResult } from '../types/tool.js';
import { defineTool } from './define-tool.js';
import { argsSchema } from './args-schema.js';
import { formatBytes } from './format.js';
import { displayPath, resolvePath, workspace } from './paths.js';
import type { WorkspaceOptions } from './paths.js';

export interface ReadFileToolOptions extends WorkspaceOptions {
  /** Most bytes of text returned by one call; larger files are read in ranges (default 1 MiB). */
  maxBytes?: number;
  /** Largest image returned (default 20 MiB). */
  maxImageBytes?: number;
  /** Lines returned when the model gives no `limit` (default 2000). */
  maxLines?: number;
  /** Longer lines are cut, with a marker (default 2000 characters). */
  maxLineLength?: number;
}

const DEFAULTS = { maxBytes: 1024 * 1024, maxImageBytes: 20 * 1024 * 1024, maxLines: 2000, maxLineLength: 2000 };
const SNIFF_BYTES = 8192;

export interface ReadFileArgs {
  path: string;
  offset?: number;
  limit?: number;
}

const parameters = argsSchema<ReadFileArgs>({
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1, description: 'Path of the file, relative to the working directory or absolute.' },
    offset: { description: '1-based line number to start reading from (default 1).', type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    limit: { description: 'Maximum number of lines to read.', type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  },
  required: ['path'],
});

/**
 * The `read_file` tool: text with a line-number gutter (`   1 | first line`), read in
 * 1-based ranges; PNG, JPEG, GIF and WebP images (recognised by their bytes, not their
 * names) as image content; other binary files refused with a clear message.
 */
export function readFileTool(options: ReadFileToolOptions): Tool<ReadFileArgs> {
  const ws = workspace(options);
  const limits = {
    maxBytes: options.maxBytes ?? DEFAULTS.maxBytes,
    maxImageBytes: options.maxImageBytes ?? DEFAULTS.maxImageBytes,
    maxLines: options.maxLines ?? DEFAULTS.maxLines,
    maxLineLength: options.maxLineLength ?? DEFAULTS.maxLineLength,
  };
  return defineTool({
    name: 'read_file',
    label: 'Read file',
    description:
      'Read a file. Text comes with 1-based line numbers; use offset and limit to read a range ' +
      `(at most ${limits.maxLines} lines or ${formatBytes(limits.maxBytes)} per call). ` +
      `PNG, JPEG, GIF and WebP images up to ${formatBytes(limits.maxImageBytes)} are returned as images.`,
    parameters,
    execute: async (args, ctx) => {
      const absolute = await resolvePath(ws, args.path);
      const shown = displayPath(ws.cwd, absolute);
      ctx.onProgress(`Reading file: ${shown}`);
      const info = await statFile(absolute, shown);
      const head = await readHead(absolute);
      const mimeType = sniffImage(head);
      if (mimeType !== undefined) return readImage(absolute, shown, info, mimeType, limits.maxImageBytes);
      if (looksBinary(head)) {
        throw ToolError.failed(`Cannot read ${shown}: it is a binary file (${formatBytes(info.size)}), not text.`);
      }
      const window: Window = {
        start: args.offset ?? 1,
        count: args.limit ?? limits.maxLines,
        maxBytes: limits.maxBytes,
        maxLineLength: limits.maxLineLength,
      };
      const read =
        info.size <= limits.maxBytes
          ? windowOfText(await readFile(absolute, 'utf8'), window)
          : await windowOfStream(absolute, window, ctx.signal);
      return render(shown, read, window, info);
    },
  });
}

async function statFile(absolute: string, shown: string): Promise<Stats> {
  let info: Stats;
  try {
    info = await stat(absolute);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw ToolError.failed(`File not found: ${shown}`);
    throw ToolError.failed(`Cannot read ${shown}: ${(e as Error).message}`);
  }
  if (info.isDirectory()) throw ToolError.failed(`${shown} is a directory; use list_files to see its contents.`);
  return info;
}

async function readHead(absolute: string): Promise<Buffer> {
  const handle = await open(absolute, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The image type announced by a file's first bytes, if it is one we return as an image. */
export function sniffImage(head: Buffer): string | undefined {
  const starts = (bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a') {
    return 'image/gif';
  }
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') {
    return 'image/webp';
  }
  return undefined;
}

/** A NUL byte or bytes that are not UTF-8 mean the file is not text we can show. */
function looksBinary(head: Buffer): boolean {
  if (head.includes(0)) return true;
  try {
    // `stream: true` tolerates a character cut in half at the end of the sample.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return false;
  } catch {
    return true;
  }
}

async function readImage(
  absolute: string,
  shown: string,
  info: Stats,
  mimeType: string,
  maxImageBytes: number,
): Promise<ToolResult> {
  if (info.size > maxImageBytes) {
    throw ToolError.failed(
      `Image ${shown} is too large (${formatBytes(info.size)}; the limit is ${formatBytes(maxImageBytes)}).`,
    );
  }
  const data = await readFile(absolute);
  return {
    content: [text(`Image file ${shown} (${mimeType}, ${formatBytes(info.size)})`), image(data.toString('base64'), mimeType)],
    details: { path: shown, mimeType, bytes: info.size },
  };
}

interface Window {
  /** 1-based first line. */
  start: number;
  count: number;
  maxBytes: number;
  maxLineLength: number;
}

interface WindowRead {
  lines: string[];
  /** Total lines in the file, when the whole file was read. */
  total?: number;
  /** Lines exist after the window. */
  more: boolean;
  /** The window was cut short by the byte limit. */
  cutByBytes: boolean;
}

function windowOfText(content: string, w: Window): WindowRead {
  const all = content === '' ? [] : content.replace(/\r?\n$/, '').split(/\r?\n/);
  checkOffset(w.start, all.length, all.length);
  const collector = collect(w);
  for (let i = w.start - 1; i < all.length && !collector.full; i++) collector.add(all[i] as string);
  const lastShown = w.start - 1 + collector.lines.length;
  return { lines: collector.lines, total: all.length, more: lastShown < all.length, cutByBytes: collector.cutByBytes };
}

/** Reads only as far as the window needs: files above the byte cap may be any size. */
async function windowOfStream(absolute: string, w: Window, signal: AbortSignal): Promise<WindowRead> {
  const stream = createReadStream(absolute, { encoding: 'utf8', signal });
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  const collector = collect(w);
  let lineNo = 0;
  let more = false;
  try {
    for await (const line of reader) {
      lineNo += 1;
      if (lineNo < w.start) continue;
      if (collector.full) {
        more = true;
        break;
      }
      collector.add(line);
    }
  } catch (e) {
    if (signal.aborted) throw new ToolError('cancelled', 'Reading was aborted');
    throw e;
  } finally {
    reader.close();
    stream.destroy();
  }
  if (lineNo < w.start) checkOffset(w.start, lineNo, lineNo);
  return more
    ? { lines: collector.lines, more, cutByBytes: collector.cutByBytes }
    : { lines: collector.lines, total: lineNo, more, cutByBytes: collector.cutByBytes };
}

function checkOffset(start: number, total: number, lines: number): void {
  if (start > 1 && start > total) {
    throw ToolError.failed(`Offset ${start} is beyond the end of the file (${lines} line${lines === 1 ? '' : 's'}).`);
  }
}

function collect(w: Window) {
  const lines: string[] = [];
  let bytes = 0;
  let cutByBytes = false;
  return {
    lines,
    get cutByBytes() {
      return cutByBytes;
    },
    get full() {
      return cutByBytes || lines.length >= w.count;
    },
    add(raw: string) {
      const line =
        raw.length > w.maxLineLength ? `${raw.slice(0, w.maxLineLength)}… [line cut: ${raw.length} characters]` : raw;
      // Counted as rendered: gutter (at least 4 digits and " | ") plus the newline.
      const gutter = Math.max(4, String(w.start + lines.length).length) + 3;
      const size = gutter + Buffer.byteLength(line) + 1;
      if (bytes + size > w.maxBytes && lines.length > 0) {
        cutByBytes = true;
        return;
      }
      bytes += size;
      lines.push(line);
    },
  };
}

function render(shown: string, read: WindowRead, w: Window, info: Stats): ToolResult {
  if (read.lines.length === 0) {
    return { content: [text(`(${shown} is empty)`)], details: { path: shown, totalLines: 0, bytes: info.size } };
  }
  const first = w.start;
  const last = w.start + read.lines.length - 1;
  const width = Math.max(4, String(last).length);
  const body = read.lines.map((line, i) => `${String(first + i).padStart(width)} | ${line}`).join('\n');
  let notice = '';
  if (read.more) {
    const of = read.total === undefined ? `of a ${formatBytes(info.size)} file` : `of ${read.total}`;
    const why = read.cutByBytes ? ` (output limit ${formatBytes(w.maxBytes)} reached)` : '';
    notice = `\n\n[Showing lines ${first}-${last} ${of}${why}. Use offset=${last + 1} to read more.]`;
  }
  return {
    content: [text(body + notice)],
    details: { path: shown, firstLine: first, lastLine: last, totalLines: read.total ?? null, bytes: info.size },
  };
}
