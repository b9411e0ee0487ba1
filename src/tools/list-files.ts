import { stat } from 'node:fs/promises';
import { ToolError } from '../types/errors.js';
import { text } from '../types/content.js';
import type { Tool } from '../types/tool.js';
import { defineTool } from './define-tool.js';
import { argsSchema } from './args-schema.js';
import { displayPath, resolvePath, workspace } from './paths.js';
import type { WorkspaceOptions } from './paths.js';
import { startWalk } from './walk.js';
import type { DirNode, WalkEntry } from './walk.js';

export interface ListFilesToolOptions extends WorkspaceOptions {
  /** Most entries in one listing (default 200). */
  maxEntries?: number;
  /** Default depth: 1 lists only the directory's own entries (default 3). */
  depth?: number;
  /** Deepest listing the model may ask for (default 10). */
  maxDepth?: number;
  /** Honour `.gitignore` files (default true). */
  gitignore?: boolean;
}

const DEFAULTS = { maxEntries: 200, depth: 3, maxDepth: 10 };

export interface ListFilesArgs {
  path?: string;
  depth?: number;
}

const parameters = argsSchema<ListFilesArgs>({
  type: 'object',
  properties: {
    path: { description: 'Directory to list, relative to the working directory (default ".").', type: 'string' },
    depth: { description: 'How many levels to descend; 1 lists only the directory itself.', type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  },
});

/**
 * The `list_files` tool: the entries of a directory tree, directories marked with a
 * trailing `/`. The walk is breadth-first, so when the entry limit cuts it short the
 * shallow levels are complete. `.gitignore` is honoured, `.git` skipped, and a directory whose
 * real path was already listed is shown but not followed, so symlink cycles end.
 */
export function listFilesTool(options: ListFilesToolOptions): Tool<ListFilesArgs> {
  const ws = workspace(options);
  const limits = {
    maxEntries: options.maxEntries ?? DEFAULTS.maxEntries,
    depth: options.depth ?? DEFAULTS.depth,
    maxDepth: options.maxDepth ?? DEFAULTS.maxDepth,
  };
  return defineTool({
    name: 'list_files',
    label: 'List files',
    description:
      `List the files and directories under a path (default depth ${limits.depth}, at most ${limits.maxEntries} ` +
      'entries; directories end with "/"). Files ignored by .gitignore are left out.',
    parameters,
    execute: async (args, ctx) => {
      const absolute = await resolvePath(ws, args.path ?? '.');
      const shown = displayPath(ws.cwd, absolute);
      ctx.onProgress(`Listing: ${shown}`);
      await requireDirectory(absolute, shown);
      const depth = Math.min(args.depth ?? limits.depth, limits.maxDepth);
      const walk = await startWalk(absolute, {
        ...(ws.root === undefined ? {} : { realRoot: await ws.realRoot() }),
        gitignore: options.gitignore ?? true,
        signal: ctx.signal,
      });
      const { entries, truncated } = await breadthFirst(walk.start, walk.readDir, depth, limits.maxEntries);
      const lines = entries.sort(byPath).map(formatEntry);
      let body = lines.length === 0 ? `(${shown} is empty)` : lines.join('\n');
      if (truncated) {
        body += `\n\n[Listing truncated at ${limits.maxEntries} entries; list a subdirectory or lower the depth to see more.]`;
      }
      return { content: [text(body)], details: { path: shown, entries: entries.length, truncated, depth } };
    },
  });
}

async function requireDirectory(absolute: string, shown: string): Promise<void> {
  const info = await stat(absolute).catch(() => undefined);
  if (info === undefined) throw ToolError.failed(`Directory not found: ${shown}`);
  if (!info.isDirectory()) throw ToolError.failed(`${shown} is a file, not a directory; use read_file to read it.`);
}

async function breadthFirst(
  start: DirNode,
  readDir: (node: DirNode) => Promise<WalkEntry[]>,
  depth: number,
  maxEntries: number,
): Promise<{ entries: WalkEntry[]; truncated: boolean }> {
  const entries: WalkEntry[] = [];
  const queue: DirNode[] = [start];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const entry of await readDir(node)) {
      if (entries.length >= maxEntries) return { entries, truncated: true };
      entries.push(entry);
      if (entry.child && entry.depth < depth) queue.push(entry.child);
    }
  }
  return { entries, truncated: false };
}

/** Orders by path segments, so a directory's contents follow it directly. */
function byPath(a: WalkEntry, b: WalkEntry): number {
  const x = a.relative.split('/');
  const y = b.relative.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] as string) < (y[i] as string) ? -1 : 1;
  }
  return x.length - y.length;
}

function formatEntry(entry: WalkEntry): string {
  const name = entry.isDirectory ? `${entry.relative}/` : entry.relative;
  // Reached a second time (a symlink cycle, or two links to one directory): listed once only.
  if (entry.alreadyVisited) return `${name} (already listed through another path; not followed)`;
  return entry.isSymlink ? `${name} (symlink)` : name;
}
