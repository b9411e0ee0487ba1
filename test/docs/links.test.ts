import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { docFiles } from './blocks.js';

// Relative links of README.md and docs/*.md lead somewhere: the file exists and, for `file.md#anchor`, the
// anchor is one of its headings (GitHub's slugs). Sections moved between files leave no dead link behind.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^(`{3,}|~{3,})/.test(line)) fenced = !fenced;
    const h = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (h) anchors.add(slug(h[1]!));
  }
  return anchors;
}

/** `[text](target)` links outside code, with their line. */
function linksOf(file: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  let fenced = false;
  readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
    if (/^(`{3,}|~{3,})/.test(text)) fenced = !fenced;
    if (fenced) return;
    for (const m of text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) links.push({ target: m[1]!, line: i + 1 });
  });
  return links;
}

describe('links in README.md and docs/', () => {
  it.each(docFiles(repoRoot))('%s: every relative link leads to a file and heading that exist', (doc) => {
    const file = path.join(repoRoot, doc);
    const broken: string[] = [];
    for (const { target, line } of linksOf(file)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [pathPart, anchor] = target.split('#') as [string, string | undefined];
      const to = pathPart ? path.resolve(path.dirname(file), pathPart) : file;
      if (!existsSync(to)) broken.push(`${doc}:${line}: ${target} (no such file)`);
      else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor)) broken.push(`${doc}:${line}: ${target} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it('docs/README.md lists every guide', () => {
    const index = readFileSync(path.join(repoRoot, 'docs/README.md'), 'utf8');
    for (const doc of docFiles(repoRoot).filter((d) => d.startsWith('docs/') && d !== 'docs/README.md')) {
      expect(index, doc).toContain(`](${path.basename(doc)})`);
    }
  });
});
