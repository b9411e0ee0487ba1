import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('what the loop makes per message keeps V8 hidden classes shared across runs', () => {
  // A spread followed by a field its source lacks (`{ ...message, turnId }`) gives every object a hidden
  // class of its own once the code is hot: a map per message in the old generation, megamorphic reads.
  it('tagged user and assistant messages, tool results and requests of two runs share their maps once the loop is hot', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', path.join('test', 'agent', 'fixtures', 'hidden-classes.ts')],
      { cwd: repoRoot, timeout: 60_000 },
    );
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ user: true, assistant: true, toolResult: true, request: true });
  }, 90_000);
});
