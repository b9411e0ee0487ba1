import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { blocksOf } from '../docs/blocks.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The ```ts block under "Compose your own loop" in docs/loop.md, as printed. */
function ownLoopSnippet(): string {
  const blocks = blocksOf(repoRoot, 'docs/loop.md').filter((b) => b.heading === 'Compose your own loop');
  expect(blocks).toHaveLength(1);
  return blocks[0]!.code;
}

describe('the own loop of docs/loop.md, "Compose your own loop"', () => {
  afterEach(() => vi.restoreAllMocks());

  it('built from the exported stages over loopState, it ends with an AgentEnd holding every message of the run; the vetoed call is answered, not run', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    // The snippet as a module of its own, importing `phi-rx` as a user's code does (resolved to src/ here).
    const dir = path.join(repoRoot, '.tmp/own-loop-docs');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `snippet-${process.pid}.ts`);
    writeFileSync(file, ownLoopSnippet());
    try {
      await import(file);
      await vi.waitFor(() => expect(lines.some((l) => l.startsWith('AgentEnd'))).toBe(true));
    } finally {
      rmSync(file, { force: true });
    }
    expect(lines).toEqual([
      'read_note: ran',
      'delete_note: not run',
      'AgentEnd: user, assistant, toolResult, toolResult, assistant',
    ]);
  });
});
