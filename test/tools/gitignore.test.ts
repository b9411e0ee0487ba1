import { describe, expect, it } from 'vitest';
import { globMatcher, isIgnored, parseGitignore } from '../../src/tools/index.js';
import type { IgnoreFile } from '../../src/tools/index.js';

const ROOT = '/repo';
const stackOf = (text: string, base = ROOT): IgnoreFile[] => [{ base, rules: parseGitignore(text) }];
const ignored = (stack: IgnoreFile[], rel: string, isDir = false) => isIgnored(stack, `${ROOT}/${rel}`, isDir);

describe('gitignore rules', () => {
  it('skips blank lines and comments, and honours escapes', () => {
    const rules = parseGitignore('\n# a comment\n   \n\\#hash\n\\!bang\n');
    expect(rules.map((r) => r.negate)).toEqual([false, false]);
    const stack = stackOf('\\#hash\n\\!bang\n');
    expect(ignored(stack, '#hash')).toBe(true);
    expect(ignored(stack, '!bang')).toBe(true);
    expect(ignored(stack, 'hash')).toBe(false);
  });

  it('matches a slash-free pattern by name at any depth', () => {
    const stack = stackOf('*.log\n');
    expect(ignored(stack, 'a.log')).toBe(true);
    expect(ignored(stack, 'deep/down/b.log')).toBe(true);
    expect(ignored(stack, 'a.log.txt')).toBe(false);
  });

  it('anchors patterns with a leading or inner slash', () => {
    const stack = stackOf('/build\ndocs/*.md\n');
    expect(ignored(stack, 'build', true)).toBe(true);
    expect(ignored(stack, 'src/build', true)).toBe(false);
    expect(ignored(stack, 'docs/a.md')).toBe(true);
    expect(ignored(stack, 'docs/deep/a.md')).toBe(false);
    expect(ignored(stack, 'other/docs/a.md')).toBe(false);
  });

  it('applies a trailing-slash pattern to directories only', () => {
    const stack = stackOf('out/\n');
    expect(ignored(stack, 'out', true)).toBe(true);
    expect(ignored(stack, 'sub/out', true)).toBe(true);
    expect(ignored(stack, 'out', false)).toBe(false);
  });

  it('lets a later negation re-include, and a later rule win', () => {
    const stack = stackOf('*.log\n!keep.log\n');
    expect(ignored(stack, 'drop.log')).toBe(true);
    expect(ignored(stack, 'keep.log')).toBe(false);
    expect(ignored(stackOf('!keep.log\n*.log\n'), 'keep.log')).toBe(true);
  });

  it('supports ** as leading, trailing and inner segment', () => {
    const stack = stackOf('**/temp\nlogs/**\na/**/b\n');
    expect(ignored(stack, 'temp', true)).toBe(true);
    expect(ignored(stack, 'x/y/temp', true)).toBe(true);
    expect(ignored(stack, 'logs/x')).toBe(true);
    expect(ignored(stack, 'logs/x/y')).toBe(true);
    expect(ignored(stack, 'logs', true)).toBe(false);
    expect(ignored(stack, 'a/b')).toBe(true);
    expect(ignored(stack, 'a/x/y/b')).toBe(true);
    expect(ignored(stack, 'a/x/c')).toBe(false);
  });

  it('supports ? and character classes, neither crossing a slash', () => {
    const stack = stackOf('file?.txt\n[ab].md\n[!xy].cfg\n');
    expect(ignored(stack, 'file1.txt')).toBe(true);
    expect(ignored(stack, 'file10.txt')).toBe(false);
    expect(ignored(stack, 'a.md')).toBe(true);
    expect(ignored(stack, 'c.md')).toBe(false);
    expect(ignored(stack, 'z.cfg')).toBe(true);
    expect(ignored(stack, 'x.cfg')).toBe(false);
    expect(ignored(stackOf('a?b\n'), 'a/b')).toBe(false);
  });

  it('lets a deeper .gitignore override an outer one, relative to its own directory', () => {
    const stack: IgnoreFile[] = [
      { base: ROOT, rules: parseGitignore('*.tmp\n') },
      { base: `${ROOT}/sub`, rules: parseGitignore('!keep.tmp\n/local\n') },
    ];
    expect(ignored(stack, 'keep.tmp')).toBe(true);
    expect(ignored(stack, 'sub/keep.tmp')).toBe(false);
    expect(ignored(stack, 'sub/other.tmp')).toBe(true);
    expect(ignored(stack, 'sub/local', true)).toBe(true);
    expect(ignored(stack, 'local', true)).toBe(false);
  });
});

describe('globMatcher', () => {
  it('matches names without a slash at any depth, whole paths with one', () => {
    expect(globMatcher('*.ts')('src/deep/a.ts')).toBe(true);
    expect(globMatcher('*.ts')('src/a.tsx')).toBe(false);
    expect(globMatcher('src/**/*.ts')('src/a/b/c.ts')).toBe(true);
    expect(globMatcher('src/**/*.ts')('lib/c.ts')).toBe(false);
    expect(globMatcher('*.{ts}')('a.{ts}')).toBe(true); // braces are literal in gitignore syntax
  });
});
