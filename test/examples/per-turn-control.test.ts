import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { perTurnDemo } from '../../examples/per-turn-control.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/per-turn-control', () => {
  it('plans with search on the planner, submits on the writer, and stops once submitted', async () => {
    expect(await perTurnDemo()).toEqual([
      'scripted/planner-model › search({"q":"Eiffel Tower height"})',
      'writer/writer-model › submit({"answer":"330 m"})',
      '[done: userStop, stopped by toolCalled(submit)]',
    ]);
  });

  it('runs as a program', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/per-turn-control.ts'], { cwd: repoRoot, timeout: 120_000 });
    expect(stdout).toMatch(/writer\/writer-model › submit/);
  }, 150_000); // tsx compiles the example first: slow on a loaded machine
});
