import { readFile, writeFile } from 'node:fs/promises';
import { ToolError } from '../types/errors.js';
import { text } from '../types/content.js';
import type { Tool } from '../types/tool.js';
import { defineTool } from './define-tool.js';
import { argsSchema } from './args-schema.js';
import { displayPath, resolvePath, workspace } from './paths.js';
import type { WorkspaceOptions } from './paths.js';

export type EditFileToolOptions = WorkspaceOptions;

export interface EditFileArgs {
  path: string;
  oldText: string;
  newText: string;
}

const parameters = argsSchema<EditFileArgs>({
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1, description: 'Path of the file to edit, relative to the working directory or absolute.' },
    oldText: { type: 'string', description: 'The exact text to replace, including whitespace. It must occur exactly once in the file.' },
    newText: { type: 'string', description: 'The text to put in its place.' },
  },
  required: ['path', 'oldText', 'newText'],
});

/**
 * The `edit_file` tool: replaces the one exact occurrence of `oldText`. No match, more than
 * one match, or an empty `oldText` is refused and the file is left untouched. Files with
 * CRLF line ends are matched with the model's LF text translated.
 */
export function editFileTool(options: EditFileToolOptions): Tool<EditFileArgs> {
  const ws = workspace(options);
  return defineTool({
    name: 'edit_file',
    label: 'Edit file',
    description:
      'Replace one exact occurrence of oldText with newText in a file. oldText must match the file exactly ' +
      '(whitespace included) and occur only once; include surrounding lines to make it unique.',
    parameters,
    execute: async (args, ctx) => {
      const absolute = await resolvePath(ws, args.path);
      const shown = displayPath(ws.cwd, absolute);
      ctx.onProgress(`Editing file: ${shown}`);
      if (args.oldText === '') throw ToolError.invalidArgs('oldText must not be empty.');
      if (args.oldText === args.newText) throw ToolError.invalidArgs('oldText and newText are identical; nothing to change.');
      const content = await readText(absolute, shown);
      const edit = locate(content, args.oldText, args.newText, shown);
      const updated = content.slice(0, edit.index) + edit.newText + content.slice(edit.index + edit.oldText.length);
      if (ctx.signal.aborted) throw new ToolError('cancelled', `Editing ${shown} was aborted`);
      await writeFile(absolute, updated, 'utf8');
      const line = lineOf(content, edit.index);
      return {
        content: [text(`Replaced 1 occurrence in ${shown} at line ${line}.`)],
        details: { path: shown, line, removedLines: countLines(edit.oldText), addedLines: countLines(edit.newText) },
      };
    },
  });
}

async function readText(absolute: string, shown: string): Promise<string> {
  let buffer: Buffer;
  try {
    buffer = await readFile(absolute);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw ToolError.failed(`File not found: ${shown}`);
    if (code === 'EISDIR') throw ToolError.failed(`${shown} is a directory.`);
    throw ToolError.failed(`Cannot read ${shown}: ${(e as Error).message}`);
  }
  if (buffer.includes(0)) throw ToolError.failed(`Cannot edit ${shown}: it is a binary file.`);
  return buffer.toString('utf8');
}

interface Located {
  index: number;
  oldText: string;
  newText: string;
}

function locate(content: string, oldText: string, newText: string, shown: string): Located {
  let matches = occurrences(content, oldText);
  let pair = { oldText, newText };
  if (matches.length === 0 && content.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r\n')) {
    pair = { oldText: oldText.replace(/\n/g, '\r\n'), newText: newText.replace(/\r?\n/g, '\r\n') };
    matches = occurrences(content, pair.oldText);
  }
  if (matches.length === 0) {
    throw ToolError.failed(
      `oldText was not found in ${shown}. It must match exactly, including whitespace and indentation; ` +
        'read the file again and copy the text from it. The file was not changed.',
    );
  }
  if (matches.length > 1) {
    const lines = matches.slice(0, 10).map((i) => lineOf(content, i));
    throw ToolError.failed(
      `oldText occurs ${matches.length} times in ${shown} (lines ${lines.join(', ')}${matches.length > 10 ? ', ...' : ''}). ` +
        'Include more surrounding text so it matches exactly once. The file was not changed.',
    );
  }
  return { index: matches[0] as number, ...pair };
}

/** Start indexes of every occurrence, overlapping ones included: "aa" occurs twice in "aaa". */
function occurrences(content: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = content.indexOf(needle); i !== -1; i = content.indexOf(needle, i + 1)) found.push(i);
  return found;
}

const lineOf = (content: string, index: number): number => content.slice(0, index).split('\n').length;
const countLines = (s: string): number => (s === '' ? 0 : s.split('\n').length);
