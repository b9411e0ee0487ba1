/**
 * The ```ts code blocks of README.md and docs/*.md, as programs: what test/docs/code-blocks.test.ts
 * type-checks and runs. The conventions (also in docs/testing.md, "The code blocks of these docs"):
 *
 * - A block is a whole program: it imports what it uses (`phi-rx` as a user's code does) and runs
 *   with no API key, no network and no server (the scripted provider plays the model).
 * - `// harness: model, agent` (a leading comment line) gives the block those names from
 *   test/docs/harness.ts, a keyless set-up (a scripted model, an agent on it, …), as your own code would.
 * - `// partial` (a leading line): a fragment, type-checked but not run.
 * - `// no-run: <reason>` (a leading line): needs a key, the network or a server; type-checked, not run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface DocBlock {
  /** `README.md`, `docs/loop.md`. */
  doc: string;
  /** 1-based line of the block's first code line in the doc. */
  line: number;
  /** The heading the block stands under (`Quickstart`). */
  heading: string;
  /** The nth ```ts block of its doc, from 1. */
  index: number;
  /** A file name for it: `docs-loop-3.ts`. */
  file: string;
  code: string;
  /** Names imported from the harness. */
  harness: string[];
  /** Why it is not run, or undefined when it runs. */
  noRun: string | undefined;
}

/** README.md and every docs/*.md, relative to the repository root. */
export function docFiles(repoRoot: string): string[] {
  const docs = readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

/** The ```ts blocks of one doc, with their markers read. */
export function blocksOf(repoRoot: string, doc: string): DocBlock[] {
  const lines = readFileSync(path.join(repoRoot, doc), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  let open: { line: number; body: string[] } | undefined;
  let fence: string | undefined;
  let heading = '';
  lines.forEach((text, i) => {
    const m = /^(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
    if (fence === undefined) {
      const h = /^#+\s+(.*)$/.exec(text);
      if (h) heading = h[1]!.trim();
      if (!m) return;
      fence = m[1]!;
      if (m[2] === 'ts' || m[2] === 'typescript') open = { line: i + 2, body: [] };
      return;
    }
    if (text.trim() === fence) {
      if (open) blocks.push(toBlock(doc, heading, blocks.length + 1, open.line, open.body));
      fence = undefined;
      open = undefined;
      return;
    }
    open?.body.push(text);
  });
  return blocks;
}

function toBlock(doc: string, heading: string, index: number, line: number, body: string[]): DocBlock {
  const firstCode = body.findIndex((l) => !/^\s*\/\//.test(l));
  const leading = firstCode === -1 ? body : body.slice(0, firstCode);
  const marker = (name: string): string | undefined => {
    for (const l of leading) {
      const m = new RegExp(`^\\s*//\\s*${name}(?::\\s*(.*))?$`).exec(l);
      if (m) return (m[1] ?? '').trim();
    }
    return undefined;
  };
  const harness = marker('harness');
  const partial = marker('partial') !== undefined;
  const noRun = marker('no-run');
  return {
    doc,
    heading,
    line,
    index,
    file: `${doc.replace(/\.md$/, '').replace(/[^\w]+/g, '-')}-${index}.ts`,
    code: body.join('\n'),
    harness: harness ? harness.split(',').map((s) => s.trim()).filter(Boolean) : [],
    noRun: partial ? 'partial' : noRun === undefined ? undefined : noRun || 'no-run',
  };
}
