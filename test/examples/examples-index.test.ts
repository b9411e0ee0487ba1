/**
 * The examples' index: each example has an expectation (test/examples/expected.ts, what it prints) and a
 * row in examples/README.md, and imports phi-rx as a user's code does and nothing from another example,
 * so that it can be copied alone. Running them is copy-alone.test.ts's job: each example, copied alone
 * into a project with the packed package installed, run with tsx and no API key.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXPECTED } from './expected.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const examples = readdirSync(path.join(repoRoot, 'examples')).filter((f) => f.endsWith('.ts')).sort();

describe('every example is indexed and stands alone', () => {
  it('each example has an expectation and a row in examples/README.md', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(examples);
    const readme = readFileSync(path.join(repoRoot, 'examples/README.md'), 'utf8');
    for (const file of examples) expect(readme, file).toContain(`[${file}](${file})`);
  });

  it('each imports phi-rx as a user would, never ../src, and no other example (each can be copied alone)', () => {
    for (const file of examples) {
      const source = readFileSync(path.join(repoRoot, 'examples', file), 'utf8');
      expect(source, file).not.toMatch(/from '\.\.\/src/);
      expect(source, file).not.toMatch(/(from|import\() *'\.\.?\//);
    }
  });
});
