import type { Dirent } from 'node:fs';
import { access, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../types/errors.js';
import { isIgnored, loadIgnoreFile } from './gitignore.js';
import type { IgnoreFile } from './gitignore.js';
import { isInside } from './paths.js';

/** One entry met while walking a directory tree. */
export interface WalkEntry {
  readonly absolute: string;
  /** `/`-separated, relative to the directory the walk started in. */
  readonly relative: string;
  readonly isDirectory: boolean;
  readonly isSymlink: boolean;
  /** 1 for the start directory's own entries. */
  readonly depth: number;
  /** A directory whose real path was already visited (a symlink cycle or a second link to it). */
  readonly alreadyVisited: boolean;
  /** Set on directories that may be descended into. */
  readonly child?: DirNode;
}

export interface DirNode {
  readonly absolute: string;
  readonly relative: string;
  readonly depth: number;
  readonly real: string;
  readonly ignores: readonly IgnoreFile[];
}

export interface WalkOptions {
  /** Real path of the workspace root; symlinks leading outside it are skipped. */
  realRoot?: string;
  /** Honour `.gitignore` files (default true). `.git` itself is always skipped. */
  gitignore?: boolean;
  signal?: AbortSignal;
}

/**
 * The state of one walk: which real directories were seen (so symlink cycles end), and
 * the options. Directories are read one at a time with `readDir`; callers choose the order
 * (breadth-first for listings, depth-first for searches).
 */
export interface Walk {
  readonly start: DirNode;
  readDir(node: DirNode): Promise<WalkEntry[]>;
}

export async function startWalk(directory: string, options: WalkOptions = {}): Promise<Walk> {
  const real = await realpath(directory);
  const visited = new Set<string>([real]);
  const useIgnore = options.gitignore ?? true;
  const ignores = useIgnore ? await ancestorIgnores(directory) : [];
  const start: DirNode = { absolute: directory, relative: '', depth: 0, real, ignores };
  return {
    start,
    readDir: (node) => readDir(node, { ...options, useIgnore, visited }),
  };
}

interface ReadContext extends WalkOptions {
  useIgnore: boolean;
  visited: Set<string>;
}

async function readDir(node: DirNode, ctx: ReadContext): Promise<WalkEntry[]> {
  if (ctx.signal?.aborted) throw new ToolError('cancelled', 'Aborted while walking the directory tree');
  let dirents: Dirent[];
  try {
    dirents = await readdir(node.absolute, { withFileTypes: true });
  } catch {
    return []; // unreadable (permissions, vanished): skip rather than fail the whole walk
  }
  const own = ctx.useIgnore ? await loadIgnoreFile(node.absolute) : undefined;
  const ignores = own ? [...node.ignores, own] : node.ignores;
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const entries: WalkEntry[] = [];
  for (const dirent of dirents) {
    if (dirent.name === '.git') continue;
    const entry = await classify(node, dirent, ignores, ctx);
    if (entry) entries.push(entry);
  }
  return entries;
}

async function classify(
  node: DirNode,
  dirent: Dirent,
  ignores: readonly IgnoreFile[],
  ctx: ReadContext,
): Promise<WalkEntry | undefined> {
  const absolute = path.join(node.absolute, dirent.name);
  const relative = node.relative === '' ? dirent.name : `${node.relative}/${dirent.name}`;
  const isSymlink = dirent.isSymbolicLink();
  let isDirectory = dirent.isDirectory();
  let real = path.join(node.real, dirent.name);
  if (isSymlink) {
    const target = await followLink(absolute);
    if (target === undefined) {
      // Dangling link: show it, but it can be neither read nor descended.
      return isIgnored(ignores, absolute, false)
        ? undefined
        : { absolute, relative, isDirectory: false, isSymlink, depth: node.depth + 1, alreadyVisited: false };
    }
    if (ctx.realRoot !== undefined && !isInside(ctx.realRoot, target.real)) return undefined;
    isDirectory = target.isDirectory;
    real = target.real;
  }
  if (ctx.useIgnore && isIgnored(ignores, absolute, isDirectory)) return undefined;
  const base = { absolute, relative, isDirectory, isSymlink, depth: node.depth + 1 };
  if (!isDirectory) return { ...base, alreadyVisited: false };
  if (ctx.visited.has(real)) return { ...base, alreadyVisited: true };
  ctx.visited.add(real);
  return { ...base, alreadyVisited: false, child: { absolute, relative, depth: node.depth + 1, real, ignores } };
}

async function followLink(absolute: string): Promise<{ real: string; isDirectory: boolean } | undefined> {
  try {
    const real = await realpath(absolute);
    const info = await stat(real);
    return { real, isDirectory: info.isDirectory() };
  } catch {
    return undefined; // dangling, or a cycle of links (ELOOP)
  }
}

/**
 * The `.gitignore` files above a directory that still apply to it: those of its ancestors
 * up to the top of the git repository it lies in. Outside a repository there are none, as
 * in git.
 */
async function ancestorIgnores(directory: string): Promise<IgnoreFile[]> {
  const ancestors: string[] = [];
  let dir = directory;
  for (;;) {
    if (await exists(path.join(dir, '.git'))) break;
    const parent = path.dirname(dir);
    if (parent === dir) return [];
    ancestors.unshift(parent);
    dir = parent;
  }
  const files = await Promise.all(ancestors.map((a) => loadIgnoreFile(a)));
  return files.filter((f): f is IgnoreFile => f !== undefined);
}

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );
