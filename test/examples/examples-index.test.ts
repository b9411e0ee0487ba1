import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EXPECTED, KEYS } from './expected.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const examples = readdirSync(path.join(repoRoot, 'examples')).filter((f) => f.endsWith('.ts')).sort();

function envWithoutKeys(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of KEYS) delete env[name];
  return env;
}

describe('every example runs as a program', () => {
  it('each example has an expectation here and a row in examples/README.md', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(examples);
    const readme = readFileSync(path.join(repoRoot, 'examples/README.md'), 'utf8');
    for (const file of examples) expect(readme, file).toContain(`[${file}](${file})`);
  });

  it('each imports phi-rx as a user would, never ../src', () => {
    for (const file of examples) {
      const source = readFileSync(path.join(repoRoot, 'examples', file), 'utf8');
      expect(source, file).not.toMatch(/from '\.\.\/src/);
    }
  });

  it.each(examples)('%s exits 0 and prints what it did', async (file) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', path.join('examples', file)], {
      cwd: repoRoot,
      env: envWithoutKeys(),
      timeout: 30_000,
    });
    expect(stdout).toMatch(EXPECTED[file]!);
  });
});
