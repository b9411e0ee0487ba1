import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../types/errors.js';

/** Where the file tools work: relative paths resolve against `cwd`; `root`, when set, confines them. */
export interface WorkspaceOptions {
  /** Directory that relative paths resolve against. */
  cwd: string;
  /**
   * When set, every path that resolves outside this directory (through `..`, an absolute
   * path or a symlink) is refused. This guards against mistakes, not against an attacker
   * racing the file system, and does not confine the bash tool.
   */
  root?: string;
}

/** A resolved workspace: absolute `cwd`, and the real path of `root` when confined. */
export interface Workspace {
  readonly cwd: string;
  readonly root?: string;
  /** The real (symlink-free) path of the root, for containment checks. */
  realRoot(): Promise<string | undefined>;
}

export function workspace(options: WorkspaceOptions): Workspace {
  const cwd = path.resolve(options.cwd);
  const root = options.root === undefined ? undefined : path.resolve(cwd, options.root);
  let real: string | undefined;
  return {
    cwd,
    ...(root === undefined ? {} : { root }),
    // The real path of an existing root is fixed at first use (re-pointing a symlinked root later does not move
    // the confinement). A root that does not exist yet (a write may create it) confines all the same: its real
    // location is the real path of its longest existing prefix plus the rest, looked up again until it exists.
    realRoot: async () => {
      if (root === undefined || real !== undefined) return real;
      real = await realpath(root).catch(() => undefined);
      return real ?? realLocation(root);
    },
  };
}

/**
 * Resolves a path the model gave against the workspace and, when the workspace is confined,
 * refuses it unless its real location lies inside the root. Returns the absolute path.
 */
export async function resolvePath(ws: Workspace, input: string): Promise<string> {
  const absolute = path.resolve(ws.cwd, input);
  // Confinement follows `root` alone: a real root that cannot be found refuses, it never turns the check off.
  const rootName = ws.root;
  if (rootName === undefined) return absolute;
  let root: string | undefined;
  try {
    root = await ws.realRoot();
  } catch (e) {
    throw new ToolError('failed', `Cannot resolve the workspace root ${rootName}: ${(e as Error).message}`, { cause: e });
  }
  if (root === undefined) throw new ToolError('failed', `The workspace root ${rootName} has no real location; access denied.`);
  let real: string;
  try {
    real = await realLocation(absolute);
  } catch (e) {
    throw new ToolError('failed', `Cannot resolve path "${input}": ${(e as Error).message}`, { cause: e });
  }
  if (!isInside(root, real)) {
    throw new ToolError('failed', `Path "${input}" is outside the workspace root ${rootName}; access denied.`);
  }
  return absolute;
}

/** True when `child` is `parent` or lies below it. Both must be absolute and normalized. */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return !escapes(rel);
}

function escapes(rel: string): boolean {
  return rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
}

const MAX_LINK_HOPS = 40;

/**
 * Where a path really points, even when it (or its tail) does not exist yet: the real path
 * of the longest existing prefix plus the missing rest. Dangling symlinks are followed to
 * their targets, so a write through one cannot escape the root.
 */
async function realLocation(p: string, hops = 0): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw new Error('too many levels of symbolic links');
  try {
    return await realpath(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const stat = await lstat(p).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    const target = path.resolve(path.dirname(p), await readlink(p));
    return realLocation(target, hops + 1);
  }
  const parent = path.dirname(p);
  // Stryker disable next-line ConditionalExpression: equivalent, realpath of the file-system root never fails with ENOENT
  if (parent === p) return p;
  return path.join(await realLocation(parent, hops), path.basename(p));
}

/** How a path is shown to the model: relative to `cwd` when below it, else absolute. */
export function displayPath(cwd: string, absolute: string): string {
  const rel = path.relative(cwd, absolute);
  if (rel === '') return '.';
  return escapes(rel) ? absolute : rel.split(path.sep).join('/');
}
