import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../examples/a2a.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/a2a', () => {
  it('the coordinator calls the calculator over A2A: progress lines, streamed text, the answer', async () => {
    const lines: string[] = [];
    const end = await main((line) => lines.push(line));
    expect(end.stopReason).toBe('stop');
    const out = lines.join('');
    expect(out).toMatch(/^calculator serves A2A at http:\/\/127\.0\.0\.1:\d+ /);
    expect(out).toContain('tool ask_calculator: Ask the agent "Calculator": Does arithmetic with its tools\n');
    expect(out).toContain('  [calculator] Calling multiply\n');
    expect(out).toContain('  [calculator] streamed "6 times 7 is 42."; result: 6 times 7 is 42.\n');
    expect(out).toContain('coordinator › The calculator says 42.\n');
  });

  it('runs as a program', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/a2a.ts'], { cwd: repoRoot, timeout: 30_000 });
    expect(stdout).toMatch(/coordinator › The calculator says 42\./);
  });
});
