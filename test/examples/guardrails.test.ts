import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { guardrailsDemo } from '../../examples/guardrails.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/guardrails', () => {
  it('cuts off the off-topic answer mid-stream, turns down the big refund, and lets the answer through', async () => {
    const lines = await guardrailsDemo();
    expect(lines[0]).toMatch(/^tripped: on-topic \(not a support question\) after "[^"]*"$/);
    expect(lines.slice(1)).toEqual([
      'agent › [Stopped by guardrail: on-topic]',
      '[done: guardRail]',
      'turned down by refund-limit',
      'refund › Rejected by guardrail "refund-limit": refunds over 100 EUR need a human',
      'agent › I could not refund 250 EUR myself; a colleague will get back to you.',
      '[done: stop]',
    ]);
  });

  it('runs as a program', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/guardrails.ts'], { cwd: repoRoot, timeout: 120_000 });
    expect(stdout).toMatch(/\[done: guardRail\]/);
  }, 150_000); // tsx compiles the example first: slow on a loaded machine
});
