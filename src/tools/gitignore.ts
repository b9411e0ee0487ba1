import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The subset of gitignore syntax the file tools honour: blank lines and `#` comments,
 * `!` negation, a trailing `/` for directories only, a leading or inner `/` to anchor the
 * pattern to the file's directory, `*`, `?`, `[...]` classes, `**` as a whole segment, and
 * `\` escapes. Not supported: `core.excludesFile`, `.git/info/exclude`.
 */
export interface IgnoreRule {
  readonly pattern: string;
  readonly regex: RegExp;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  /** Anchored rules match the path relative to the ignore file's directory; others the name. */
  readonly anchored: boolean;
}

/** The rules of one `.gitignore`, and the directory they are relative to. */
export interface IgnoreFile {
  readonly base: string;
  readonly rules: readonly IgnoreRule[];
}

/** Parses the text of a `.gitignore` file. Lines it cannot use are skipped, never fatal. */
export function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split('\n')) {
    const rule = parseLine(raw);
    if (rule) rules.push(rule);
  }
  return rules;
}

function parseLine(raw: string): IgnoreRule | undefined {
  // Trailing spaces are dropped unless escaped with a backslash.
  let line = raw.replace(/\r$/, '').replace(/(?<!\\)\s+$/, '');
  if (line === '' || line.startsWith('#')) return undefined;
  const negate = line.startsWith('!');
  if (negate) line = line.slice(1);
  const dirOnly = line.endsWith('/');
  if (dirOnly) line = line.replace(/\/+$/, '');
  const leadingSlash = line.startsWith('/');
  if (leadingSlash) line = line.replace(/^\/+/, '');
  if (line === '') return undefined;
  const anchored = leadingSlash || line.includes('/');
  return { pattern: raw.trim(), regex: new RegExp(`^${globToRegexSource(line)}$`), negate, dirOnly, anchored };
}

/** Reads `<dir>/.gitignore`; undefined when there is none or it cannot be read. */
export async function loadIgnoreFile(dir: string): Promise<IgnoreFile | undefined> {
  try {
    const text = await readFile(path.join(dir, '.gitignore'), 'utf8');
    const rules = parseGitignore(text);
    return rules.length === 0 ? undefined : { base: dir, rules };
  } catch {
    return undefined;
  }
}

/**
 * Whether a path is ignored by a stack of ignore files ordered from the outermost directory
 * to the innermost. As in git, the last matching rule wins, so deeper files and later lines
 * override earlier ones, and `!` re-includes.
 */
export function isIgnored(stack: readonly IgnoreFile[], absolute: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const file of stack) {
    const rel = path.relative(file.base, absolute);
    if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) continue;
    const relPosix = rel.split(path.sep).join('/');
    const name = path.basename(absolute);
    for (const rule of file.rules) {
      if (rule.dirOnly && !isDirectory) continue;
      if (rule.regex.test(rule.anchored ? relPosix : name)) ignored = !rule.negate;
    }
  }
  return ignored;
}

/**
 * A gitignore-style glob as a predicate over a `/`-separated relative path: a glob without
 * a slash matches the file name at any depth, one with a slash matches the whole path.
 */
export function globMatcher(glob: string): (relativePath: string) => boolean {
  const trimmed = glob.replace(/^\/+/, '');
  const anchored = glob.startsWith('/') || trimmed.includes('/');
  const regex = new RegExp(`^${globToRegexSource(trimmed)}$`);
  return (rel) => regex.test(anchored ? rel : rel.slice(rel.lastIndexOf('/') + 1));
}

/** Translates glob syntax to a regex body; `*` and `?` never cross a `/`. */
export function globToRegexSource(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === '*') {
      const [source, consumed] = star(glob, i);
      out += source;
      i += consumed;
    } else if (c === '?') {
      out += '[^/]';
      i += 1;
    } else if (c === '[') {
      const [source, consumed] = bracket(glob, i);
      out += source;
      i += consumed;
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1] as string);
      i += 2;
    } else {
      out += escapeRegex(c);
      i += 1;
    }
  }
  return out;
}

function star(glob: string, i: number): [string, number] {
  if (glob[i + 1] !== '*') return ['[^/]*', 1];
  const wholeSegment = (i === 0 || glob[i - 1] === '/') && (i + 2 === glob.length || glob[i + 2] === '/');
  // `**` inside a segment is just two stars.
  if (!wholeSegment) return ['[^/]*', 2];
  // Trailing `**` matches everything below; `**/` matches zero or more directories.
  if (i + 2 === glob.length) return ['.*', 2];
  return ['(?:.*/)?', 3];
}

function bracket(glob: string, start: number): [string, number] {
  let i = start + 1;
  let negate = false;
  if (glob[i] === '!' || glob[i] === '^') {
    negate = true;
    i += 1;
  }
  let body = '';
  let first = true;
  while (i < glob.length && (glob[i] !== ']' || first)) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) {
      body += literalInClass(glob[i + 1] as string);
      i += 2;
    } else {
      body += c === '[' || c === ']' || c === '^' || c === '\\' ? `\\${c}` : c;
      i += 1;
    }
    first = false;
  }
  // An unclosed `[` is a literal bracket.
  if (i >= glob.length) return ['\\[', 1];
  return [`(?!/)[${negate ? '^' : ''}${body}]`, i - start + 1];
}

// A backslash before a letter would make a regex class like `\d`; letters need no escape.
const literalInClass = (c: string): string => (/[A-Za-z0-9]/.test(c) ? c : `\\${c}`);

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
