import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore } from 'phi-rx/session';
import { sampleSession } from 'phi-rx/testing';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(repoRoot, 'src/cli/main.ts');

let dir: string;
beforeAll(async () => {
  dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'phi-rx-session-listing-')), 'sessions');
  await mkdir(dir);
  const store = new FileSessionStore(dir);
  await store.save(sampleSession('older', 'agent-a'));
  await store.save(sampleSession('newer', 'agent-a'));
  // Cut short, with an escape sequence the terminal must not get raw (it would clear the screen).
  await writeFile(path.join(dir, 'broken.json'), '{"version": 1, "sessionId": "\u001b[2J');
});
afterAll(async () => {
  await rm(path.dirname(dir), { recursive: true, force: true });
});

function sessionsCommand(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', cli, 'sessions', '--sessions', dir], { cwd: repoRoot }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('a corrupt session file', () => {
  it('is skipped by `phi-rx sessions` with a warning naming it, and the rest are listed', async () => {
    const { code, stdout, stderr } = await sessionsCommand();
    expect(code).toBe(0);
    expect(stdout.split('\n').filter((l) => l.length > 0).map((l) => l.split('  ')[0])).toEqual(['newer', 'older', '2 sessions in ' + dir]);
    expect(stderr).toContain(`warning: skipped a corrupt session: Session file ${path.join(dir, 'broken.json')} is corrupt: not valid JSON`);
    expect(stderr).not.toContain('\u001b');
  }, 30_000);

  it("is skipped by FileSessionStore.listForAgent, named to onSkipped, and the agent's sessions are listed", async () => {
    const named: string[] = [];
    const sessions = await new FileSessionStore(dir).listForAgent('agent-a', { onSkipped: (e) => named.push(e.file) });
    expect(sessions.map((s) => s.sessionId).sort()).toEqual(['newer', 'older']);
    expect(named).toEqual([path.join(dir, 'broken.json')]);
  });
});
