import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../examples/best-of-n.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/best-of-n', () => {
  it('runs three branches, lets the judge pick the second, and continues from it', async () => {
    const lines: string[] = [];
    const result = await main((line) => lines.push(line));
    expect(result.outcomes).toHaveLength(3);
    expect(result.outcomes.every((o) => !o.failed)).toBe(true);
    expect(result.selectedIndex).toBe(1);
    expect(result.selected.loopId).toBe('best-of-n.thorough.1');
    expect(result.evaluationUsage.totalTokens).toBeGreaterThan(0);
    expect(lines[0]).toBe('started 3 branches: best-of-n.terse.1, best-of-n.thorough.1, best-of-n.rambling.1');
    expect(lines).toContain('selected best-of-n.thorough.1 (judge used ' + result.evaluationUsage.totalTokens + ' tokens)');
    expect(lines.at(-2)).toMatch(/^winner says: Use a Map keyed by id/);
  });

  it('runs as a program', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/best-of-n.ts'], { cwd: repoRoot, timeout: 20_000 });
    expect(stdout).toMatch(/selected best-of-n\.thorough\.1/);
  });
});
