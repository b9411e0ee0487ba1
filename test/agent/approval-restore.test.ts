import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileSessionStore, LoopStatus } from '../../src/session/index.js';

const run = promisify(execFile);
const script = join(import.meta.dirname, 'fixtures', 'approval-process.ts');
const tsx = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'tsx');

async function phase(name: 'suspend' | 'resume', dir: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(tsx, [script, name, dir], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

describe('pending approvals survive save() → new process → restore()', () => {
  it('process 1 stops while a call waits; process 2 restores, approves, and the model sees the result', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'phi-rx-approval-'));
    try {
      const first = await phase('suspend', dir);
      expect(first.pending).toMatchObject([{ toolCallId: 't1', toolName: 'transfer', args: { amount: 50 } }]);
      const saved = await new FileSessionStore(dir).load('approval-session');
      expect(saved.loops.map((l) => l.status)).toEqual([LoopStatus.Running]);

      const second = await phase('resume', dir);
      expect(second.pid).not.toBe(first.pid);
      expect(second.pending).toMatchObject([{ toolCallId: 't1', toolName: 'transfer', args: { amount: 50 } }]);
      expect(second.end).toBe('stop');
      // The scripted model's answer lists the results it was sent: the lookup from process 1, the transfer run in process 2.
      expect(second.answer).toBe(`l1=balance 1000; t1=moved 50 (pid ${second.pid})`);
      expect(second.roles).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);

      const after = await new FileSessionStore(dir).load('approval-session');
      expect(after.loops).toHaveLength(2);
      expect(after.loops[1]!.parentLoopId).toBe(after.loops[0]!.loopId);
      expect(after.loops[1]!.status).toBe(LoopStatus.Completed);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
