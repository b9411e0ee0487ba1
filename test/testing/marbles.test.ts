import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The `@example` of the JSDoc just above `export function <name>` in `file`, without the comment's ` * `. */
function exampleOf(file: string, name: string): string {
  const source = readFileSync(path.join(repoRoot, file), 'utf8');
  const doc = source.slice(0, source.indexOf(`export function ${name}(`));
  const block = doc.slice(doc.lastIndexOf('/**'));
  const lines = block.split('\n');
  const from = lines.findIndex((l) => l.includes('@example'));
  expect(from, `${name} has an @example`).toBeGreaterThan(0);
  return lines.slice(from + 1).filter((l) => !l.includes('*/')).map((l) => l.replace(/^\s*\* ?/, '')).join('\n');
}

describe('agentTestScheduler', () => {
  it('its JSDoc example runs as printed (no placeholders), with its imports, and its marble holds', async () => {
    const example = exampleOf('src/testing/marbles.ts', 'agentTestScheduler');
    expect(example).not.toContain('???');
    const dir = path.join(repoRoot, '.tmp/jsdoc-examples');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `agent-test-scheduler-${process.pid}.ts`);
    writeFileSync(file, [
      "import { agentLoop } from 'phi-rx';",
      "import { agentTestScheduler, eventLetters, scriptedModel, scriptedProvider } from 'phi-rx/testing';",
      example,
    ].join('\n'));
    try {
      await import(file); // assertDeepEqual throws when the marble does not hold
    } finally {
      rmSync(file, { force: true });
    }
  });
});
