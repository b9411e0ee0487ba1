import { accessSync, constants as fsConstants } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  EMPTY,
  catchError,
  concat,
  concatMap,
  defer,
  filter,
  from,
  map,
  mergeMap,
  of,
  raceWith,
  take,
  throwError,
  toArray,
} from 'rxjs';
import type { Observable } from 'rxjs';
import { ToolError } from '../types/errors.js';
import { text } from '../types/content.js';
import type { Tool, ToolEmission, ToolResult } from '../types/tool.js';
import { toolProgress } from '../types/tool.js';
import { defineTool } from './define-tool.js';
import { argsSchema } from './args-schema.js';
import { globMatcher } from './gitignore.js';
import { displayPath, isInside, resolvePath, workspace } from './paths.js';
import type { Workspace, WorkspaceOptions } from './paths.js';
import { aborted$, lineSplitter, processGroup$ } from './process.js';
import { startWalk } from './walk.js';
import type { DirNode, Walk } from './walk.js';

export interface SearchToolOptions extends WorkspaceOptions {
  /** Matches returned when the model gives no `maxResults` (default 50). */
  maxResults?: number;
  /** Largest `maxResults` the model may ask for (default 500). */
  maxResultsCap?: number;
  /**
   * `true` or `'auto'` (default): use ripgrep when `rg` is on PATH; `false`: always use the
   * built-in search; a string: the path of the `rg` binary to use.
   */
  ripgrep?: boolean | 'auto' | string;
  /** Honour `.gitignore` files (default true). */
  gitignore?: boolean;
  /** Files larger than this are skipped (default 10 MiB). */
  maxFileBytes?: number;
  /** Matched lines longer than this are cut (default 300 characters). */
  maxLineLength?: number;
  /** Deepest directory level the built-in search descends to (default 64). */
  maxDepth?: number;
}

const DEFAULTS = { maxResults: 50, maxResultsCap: 500, maxFileBytes: 10 * 1024 * 1024, maxLineLength: 300, maxDepth: 64 };

export interface SearchArgs {
  pattern: string;
  path?: string;
  literal?: boolean;
  ignoreCase?: boolean;
  glob?: string;
  maxResults?: number;
}

const parameters = argsSchema<SearchArgs>({
  type: 'object',
  properties: {
    pattern: { type: 'string', minLength: 1, description: 'Regular expression to search for (or plain text with literal: true).' },
    path: { description: 'File or directory to search, relative to the working directory (default ".").', type: 'string' },
    literal: { description: 'Treat the pattern as plain text, not a regular expression.', type: 'boolean' },
    ignoreCase: { description: 'Match case-insensitively.', type: 'boolean' },
    glob: { description: 'Only search files whose path matches this glob, e.g. "*.ts" or "src/**/*.js".', type: 'string' },
    maxResults: { description: 'Maximum number of matching lines to return.', type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  },
  required: ['pattern'],
});

/** One matching line. `file` is absolute; `line` is 1-based. */
export interface SearchMatch {
  file: string;
  line: number;
  text: string;
}

interface Query {
  pattern: string;
  literal: boolean;
  ignoreCase: boolean;
  glob: string | undefined;
  /** One more than the caller wants, to tell whether results were cut. */
  limit: number;
}

/**
 * The `search` tool: lines matching a pattern, as `path:line: text`, sorted by path. Uses
 * ripgrep when it is on PATH and a built-in walker otherwise; both skip `.git`, honour
 * `.gitignore`, follow symlinks without looping, and skip binary files. Note the regex
 * dialects differ slightly (Rust's for ripgrep, JavaScript's for the fallback).
 */
export function searchTool(options: SearchToolOptions): Tool<SearchArgs> {
  const ws = workspace(options);
  const limits = { ...DEFAULTS, ...definedOnly(options) };
  return defineTool({
    name: 'search',
    label: 'Search',
    description:
      'Search file contents for a regular expression (or literal text) under a path; returns matching lines as ' +
      `"path:line: text" (at most ${limits.maxResults} by default). Files ignored by .gitignore are skipped.`,
    parameters,
    execute: (args, ctx) =>
      defer(() => {
        const maxResults = Math.min(args.maxResults ?? limits.maxResults, limits.maxResultsCap);
        const query: Query = {
          pattern: args.pattern,
          literal: args.literal ?? false,
          ignoreCase: args.ignoreCase ?? false,
          glob: args.glob,
          limit: maxResults + 1,
        };
        const rg = ripgrepBinary(options.ripgrep ?? 'auto');
        const search$ = defer(() => resolveExisting(ws, args.path ?? '.')).pipe(
          mergeMap((target) =>
            rg === undefined
              ? from(builtInSearch(ws, target, query, { ...limits, gitignore: options.gitignore ?? true }, ctx.signal))
              : ripgrepSearch(ws, rg, target, query, { ...limits, gitignore: options.gitignore ?? true }),
          ),
          map((matches) => render(ws, args, matches, maxResults, limits.maxLineLength, rg === undefined ? 'builtin' : 'ripgrep')),
          raceWith(aborted$(ctx.signal).pipe(mergeMap(() => throwError(() => new ToolError('cancelled', 'Search aborted'))))),
        );
        return concat(of<ToolEmission>(toolProgress(`Searching for ${JSON.stringify(args.pattern)}`)), search$);
      }),
  });
}

async function resolveExisting(ws: Workspace, input: string): Promise<string> {
  const target = await resolvePath(ws, input);
  if ((await stat(target).catch(() => undefined)) === undefined) {
    throw ToolError.failed(`Path not found: ${displayPath(ws.cwd, target)}`);
  }
  return target;
}

function definedOnly(options: SearchToolOptions): Partial<typeof DEFAULTS> {
  const out: Partial<typeof DEFAULTS> = {};
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const value = options[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function render(
  ws: Workspace,
  args: SearchArgs,
  matches: SearchMatch[],
  maxResults: number,
  maxLineLength: number,
  engine: 'ripgrep' | 'builtin',
): ToolResult {
  const truncated = matches.length > maxResults;
  const shown = matches.slice(0, maxResults);
  if (shown.length === 0) {
    return { content: [text('No matches found')], details: { matches: 0, truncated: false, engine } };
  }
  const lines = shown.map((m) => `${displayPath(ws.cwd, m.file)}:${m.line}: ${cut(m.text, maxLineLength)}`);
  let body = lines.join('\n');
  if (truncated) {
    body += `\n\n[Results truncated at ${maxResults} matches; narrow the pattern, path or glob to see the rest.]`;
  }
  return {
    content: [text(body)],
    details: { matches: shown.length, truncated, engine, pattern: args.pattern },
  };
}

const cut = (line: string, max: number): string => (line.length > max ? `${line.slice(0, max)}… [line cut]` : line);

// ---------------------------------------------------------------------------------------
// ripgrep

let rgOnPath: string | null | undefined;

/** Which `rg` to run, or undefined for the built-in search. */
function ripgrepBinary(choice: boolean | string): string | undefined {
  if (choice === false) return undefined;
  if (typeof choice === 'string' && choice !== 'auto') return choice;
  if (rgOnPath === undefined) rgOnPath = findOnPath('rg') ?? null;
  return rgOnPath ?? undefined;
}

/** The first executable `name` on PATH, like `which`. */
export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

interface EngineLimits {
  maxFileBytes: number;
  maxDepth: number;
  gitignore: boolean;
}

type RgMessage = { type: string; data?: { path?: { text?: string }; lines?: { text?: string }; line_number?: number } };

function ripgrepSearch(ws: Workspace, rg: string, target: string, q: Query, limits: EngineLimits): Observable<SearchMatch[]> {
  const args = [
    '--json',
    '--sort',
    'path',
    '--hidden',
    '--follow',
    '--glob',
    '!.git',
    '--max-filesize',
    String(limits.maxFileBytes),
    q.ignoreCase ? '--ignore-case' : '--case-sensitive',
    ...(limits.gitignore
      ? ['--no-require-git', '--no-ignore-global', '--no-ignore-exclude', '--no-ignore-dot']
      : ['--no-ignore']),
    ...(q.literal ? ['--fixed-strings'] : []),
    ...(q.glob === undefined ? [] : ['--glob', q.glob]),
    '--regexp',
    q.pattern,
    '--',
    target,
  ];
  const lines = lineSplitter();
  let stderr = '';
  let sawJson = false;
  const inRoot = rootFilter(ws);
  return processGroup$({ file: rg, args, cwd: ws.cwd, env: process.env }).pipe(
    mergeMap((e): Observable<string> => {
      if (e.type === 'stdout') return from(lines.push(e.chunk));
      if (e.type === 'stderr') {
        stderr += e.chunk.toString('utf8');
        return EMPTY;
      }
      const rest = lines.end();
      // Exit 2 with no output at all is a real failure (bad regex, bad glob); with output it
      // only means some paths could not be read, which a search shrugs off as grep does.
      if (e.code === 2 && !sawJson && rest.length === 0) {
        return throwError(() => ToolError.invalidArgs(`ripgrep failed: ${stderr.trim() || 'exit code 2'}`));
      }
      return from(rest);
    }),
    map((line) => {
      sawJson = true;
      return JSON.parse(line) as RgMessage;
    }),
    filter((m) => m.type === 'match' && typeof m.data?.path?.text === 'string'),
    map((m) => ({
      file: path.resolve(ws.cwd, m.data?.path?.text as string),
      line: m.data?.line_number ?? 0,
      text: (m.data?.lines?.text ?? '').replace(/\r?\n$/, ''),
    })),
    concatMap((m) => (inRoot ? from(inRoot(m.file)).pipe(filter(Boolean), map(() => m)) : of(m))),
    take(q.limit),
    toArray(),
    catchError((e: unknown) =>
      throwError(() =>
        e instanceof ToolError ? e : ToolError.failed(`Cannot run ripgrep (${rg}): ${(e as Error).message}`),
      ),
    ),
  );
}

/**
 * With a workspace root, ripgrep (which follows symlinks) may reach files outside it; such
 * matches are dropped. Undefined when the workspace is not confined.
 */
function rootFilter(ws: Workspace): ((file: string) => Promise<boolean>) | undefined {
  if (ws.root === undefined) return undefined;
  const seen = new Map<string, Promise<boolean>>();
  return (file) => {
    let verdict = seen.get(file);
    if (verdict === undefined) {
      verdict = Promise.all([ws.realRoot(), realpath(file)]).then(
        ([root, real]) => root !== undefined && isInside(root, real),
        () => false,
      );
      seen.set(file, verdict);
    }
    return verdict;
  };
}

// ---------------------------------------------------------------------------------------
// built-in fallback

const SNIFF_BYTES = 8192;

/** Depth-first, names sorted at every level: the order `rg --sort path` gives. */
async function builtInSearch(
  ws: Workspace,
  target: string,
  q: Query,
  limits: EngineLimits,
  signal: AbortSignal,
): Promise<SearchMatch[]> {
  const regex = compile(q);
  const matches: SearchMatch[] = [];
  const info = await stat(target);
  if (!info.isDirectory()) {
    await searchFile(target, regex, matches, q.limit, limits.maxFileBytes);
    return matches;
  }
  const realRoot = await ws.realRoot();
  const walk = await startWalk(target, {
    ...(realRoot === undefined ? {} : { realRoot }),
    gitignore: limits.gitignore,
    signal,
  });
  const include = q.glob === undefined ? undefined : globMatcher(q.glob);
  await visit(walk, walk.start, { regex, matches, include, q, limits });
  return matches;
}

interface Visit {
  regex: RegExp;
  matches: SearchMatch[];
  include: ((rel: string) => boolean) | undefined;
  q: Query;
  limits: EngineLimits;
}

async function visit(walk: Walk, node: DirNode, v: Visit): Promise<void> {
  for (const entry of await walk.readDir(node)) {
    if (v.matches.length >= v.q.limit) return;
    if (entry.isDirectory) {
      if (entry.child && entry.depth < v.limits.maxDepth) await visit(walk, entry.child, v);
    } else if (v.include === undefined || v.include(entry.relative)) {
      await searchFile(entry.absolute, v.regex, v.matches, v.q.limit, v.limits.maxFileBytes);
    }
  }
}

function compile(q: Query): RegExp {
  const source = q.literal ? q.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : q.pattern;
  try {
    return new RegExp(source, q.ignoreCase ? 'i' : '');
  } catch (e) {
    throw ToolError.invalidArgs(`Invalid regular expression ${JSON.stringify(q.pattern)}: ${(e as Error).message}`);
  }
}

async function searchFile(file: string, regex: RegExp, into: SearchMatch[], limit: number, maxBytes: number): Promise<void> {
  let buffer: Buffer;
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > maxBytes) return;
    buffer = await readFile(file);
  } catch {
    return; // unreadable or vanished: skip, as grep does
  }
  if (buffer.subarray(0, SNIFF_BYTES).includes(0)) return; // binary
  const lines = buffer.toString('utf8').split('\n');
  for (let i = 0; i < lines.length && into.length < limit; i++) {
    const line = (lines[i] as string).replace(/\r$/, '');
    if (i === lines.length - 1 && line === '') break;
    if (regex.test(line)) into.push({ file, line: i + 1, text: line });
  }
}
