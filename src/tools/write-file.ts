import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../types/errors.js';
import { text } from '../types/content.js';
import type { Tool } from '../types/tool.js';
import { defineTool } from './define-tool.js';
import { argsSchema } from './args-schema.js';
import { formatBytes } from './format.js';
import { displayPath, resolvePath, workspace } from './paths.js';
import type { WorkspaceOptions } from './paths.js';

export type WriteFileToolOptions = WorkspaceOptions;

export interface WriteFileArgs {
  path: string;
  content: string;
}

const parameters = argsSchema<WriteFileArgs>({
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1, description: 'Path of the file, relative to the working directory or absolute.' },
    content: { type: 'string', description: 'The complete new content of the file.' },
  },
  required: ['path', 'content'],
});

/** The `write_file` tool: creates or overwrites a file, creating missing parent directories. */
export function writeFileTool(options: WriteFileToolOptions): Tool<WriteFileArgs> {
  const ws = workspace(options);
  return defineTool({
    name: 'write_file',
    label: 'Write file',
    description:
      'Create a file or overwrite it with the given content; missing parent directories are created. ' +
      'To change part of an existing file, prefer edit_file.',
    parameters,
    execute: async (args, ctx) => {
      const absolute = await resolvePath(ws, args.path);
      const shown = displayPath(ws.cwd, absolute);
      ctx.onProgress(`Writing file: ${shown}`);
      const existing = await stat(absolute).catch(() => undefined);
      if (existing?.isDirectory()) throw ToolError.failed(`Cannot write ${shown}: it is a directory.`);
      try {
        await mkdir(path.dirname(absolute), { recursive: true });
        await writeFile(absolute, args.content, { encoding: 'utf8', signal: ctx.signal });
      } catch (e) {
        if (ctx.signal.aborted) throw new ToolError('cancelled', `Writing ${shown} was aborted`);
        throw ToolError.failed(`Cannot write ${shown}: ${(e as Error).message}`);
      }
      const bytes = Buffer.byteLength(args.content);
      return {
        content: [text(`Wrote ${formatBytes(bytes)} to ${shown}${existing ? '' : ' (new file)'}`)],
        details: { path: shown, bytes, created: existing === undefined },
      };
    },
  });
}
