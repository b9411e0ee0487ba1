import { existsSync, readFileSync } from 'node:fs';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asyncScheduler, isObservable } from 'rxjs';
import { bashTool } from '../../src/tools/index.js';
import { ToolError } from '../../src/types/errors.js';
import type { ToolContext, ToolEmission } from '../../src/types/tool.js';
import { failureOf, runTool, tempDir, textOf } from './helpers.js';

/** A process that is gone or a zombie counts as dead: zombies hold no resources and run nothing. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return condition();
}

/** Starts a background grandchild `sleep` and records its pid, then waits on it. */
const GRANDCHILD = 'sleep 30 & echo $! > grandchild.pid; echo started; wait';

describe('bash tool', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    dir = await realpath(dir);
  });
  afterEach(() => remove());

  it('returns stdout and exit code 0, in the working directory, with progress lines', async () => {
    const run = await runTool(bashTool({ cwd: dir }), { command: 'echo hello; pwd' });
    expect(run.error).toBeUndefined();
    expect(textOf(run.result)).toBe(`hello\n${dir}\nExit code: 0`);
    expect(run.result?.isError).toBeFalsy();
    expect(run.result?.details).toMatchObject({ exitCode: 0, timedOut: false });
    expect(run.progress).toEqual(['Executing: echo hello; pwd', 'Command exited with code 0']);
  });

  it('treats a non-zero exit as a result, with stderr shown separately', async () => {
    const run = await runTool(bashTool({ cwd: dir }), { command: 'echo out; echo oops >&2; exit 3' });
    expect(run.error).toBeUndefined();
    expect(run.result?.isError).toBeFalsy();
    expect(textOf(run.result)).toBe('out\n[stderr]\noops\nExit code: 3');
    expect(run.result?.details).toMatchObject({ exitCode: 3, stdoutBytes: 4, stderrBytes: 5 });
  });

  it('says so when there is no output', async () => {
    const run = await runTool(bashTool({ cwd: dir }), { command: 'true' });
    expect(textOf(run.result)).toBe('(no output)\nExit code: 0');
  });

  it('streams output lines as updates while the command still runs', async () => {
    const tool = bashTool({ cwd: dir });
    const controller = new AbortController();
    const execution = tool.execute({ command: 'echo one; echo two; sleep 30' }, context(controller.signal));
    if (!isObservable(execution)) throw new Error('bash must return an Observable');
    const lines: string[] = [];
    const ended = new Promise<unknown>((resolve) => {
      execution.subscribe({
        next: (e: ToolEmission | string) => {
          if (typeof e !== 'string' && 'kind' in e && e.kind === 'update') {
            lines.push(...textOf(e.partial).split('\n'));
            // Both lines arrived while `sleep 30` is running: stop it.
            if (lines.length >= 2) controller.abort();
          }
        },
        error: resolve,
        complete: () => resolve(undefined),
      });
    });
    const error = await ended;
    expect(lines).toEqual(['one', 'two']);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).kind).toBe('cancelled');
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const started = Date.now();
    const run = await runTool(bashTool({ cwd: dir, timeoutMs: 400, killGraceMs: 200 }), { command: GRANDCHILD });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run.result?.isError).toBe(true);
    expect(textOf(run.result)).toContain('started');
    expect(textOf(run.result)).toContain('Command timed out after 0.4 s');
    expect(run.result?.details).toMatchObject({ timedOut: true, exitCode: null });
    const pid = Number(await readFile(path.join(dir, 'grandchild.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
  });

  it('honours a per-call timeout in seconds', async () => {
    const run = await runTool(bashTool({ cwd: dir }), { command: 'sleep 10', timeout: 0.2 });
    expect(run.result?.details).toMatchObject({ timedOut: true });
    expect(textOf(run.result)).toContain('timed out after 0.2 s');
  });

  it('kills the whole process group when aborted', async () => {
    const controller = new AbortController();
    const pidFile = path.join(dir, 'grandchild.pid');
    const pending = runTool(bashTool({ cwd: dir }), { command: GRANDCHILD }, controller.signal);
    expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '')).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(isAlive(pid)).toBe(true);
    controller.abort();
    const run = await pending;
    expect(run.error).toBeInstanceOf(ToolError);
    expect(failureOf(run)).toContain('aborted');
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
  });

  it('finishes when the command exits even if a background child keeps its output open', async () => {
    const started = Date.now();
    const run = await runTool(bashTool({ cwd: dir }), { command: 'sleep 30 & echo $! > bg.pid; echo hi' });
    const pid = Number(await readFile(path.join(dir, 'bg.pid'), 'utf8'));
    try {
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(textOf(run.result)).toBe('hi\nExit code: 0');
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });

  it('truncates stdout and stderr separately, each with a marker', async () => {
    const run = await runTool(bashTool({ cwd: dir, maxOutputBytes: 1000 }), {
      command: "head -c 5000 /dev/zero | tr '\\0' x; head -c 3000 /dev/zero | tr '\\0' y >&2",
    });
    const out = textOf(run.result);
    expect(out).toContain(`${'x'.repeat(1000)}\n[stdout truncated: showing the first 1000 B of 4.9 KB]`);
    expect(out).toContain(`${'y'.repeat(1000)}\n[stderr truncated: showing the first 1000 B of 2.9 KB]`);
    expect(out).not.toContain('x'.repeat(1001));
    expect(run.result?.details).toMatchObject({ stdoutBytes: 5000, stderrBytes: 3000, truncated: true, exitCode: 0 });
  });

  it('refuses denied commands before running them', async () => {
    const marker = path.join(dir, 'ran');
    const tool = bashTool({ cwd: dir, denyPatterns: ['forbidden-word', /\bshutdown\b/] });
    const refused = await runTool(tool, { command: `touch ${marker}; echo forbidden-word` });
    expect(failureOf(refused)).toContain('blocked');
    expect(existsSync(marker)).toBe(false);
    expect(failureOf(await runTool(tool, { command: `touch ${marker}; shutdown now` }))).toContain('blocked');
    expect(existsSync(marker)).toBe(false);
    const allowed = await runTool(tool, { command: 'echo fine' });
    expect(textOf(allowed.result)).toContain('fine');
  });

  it('denies rm -rf / by default, however it is spaced or spelled', async () => {
    const tool = bashTool({ cwd: dir });
    for (const command of ['rm -rf /', 'rm  -rf   /', 'echo x && rm -fr /', 'rm -r -f /', 'rm -Rf ~']) {
      expect(failureOf(await runTool(tool, { command })), command).toContain('blocked');
    }
    await writeFile(path.join(dir, 'junk'), 'x');
    const run = await runTool(tool, { command: 'rm -rf ./junk && ls' });
    expect(textOf(run.result)).toBe('(no output)\nExit code: 0');
  });

  it('scrubs loader and shell-startup variables from the environment', async () => {
    await writeFile(path.join(dir, 'startup.sh'), 'echo INJECTED\n');
    process.env.DYLD_INSERT_LIBRARIES = '/nowhere/lib.dylib';
    try {
      const tool = bashTool({
        cwd: dir,
        env: { LD_PRELOAD: '/nowhere/lib.so', LD_AUDIT: '/nowhere/a.so', BASH_ENV: path.join(dir, 'startup.sh'), KEEP: 'kept' },
      });
      const run = await runTool(tool, { command: 'echo "[$LD_PRELOAD][$LD_AUDIT][$DYLD_INSERT_LIBRARIES][$BASH_ENV][$KEEP]"' });
      expect(textOf(run.result)).toBe('[][][][][kept]\nExit code: 0');
    } finally {
      delete process.env.DYLD_INSERT_LIBRARIES;
    }
  });

  it('passes extra variables from the call but refuses PATH, HOME and loader overrides', async () => {
    const tool = bashTool({ cwd: dir });
    const ok = await runTool(tool, { command: 'echo "$GREETING"', env: { GREETING: 'hi' } });
    expect(textOf(ok.result)).toBe('hi\nExit code: 0');
    for (const name of ['PATH', 'HOME', 'LD_PRELOAD', 'DYLD_LIBRARY_PATH']) {
      const run = await runTool(tool, { command: 'echo no', env: { [name]: '/tmp' } });
      expect(failureOf(run)).toContain(`${name} may not be overridden`);
    }
  });

  it('rejects a missing command at validation', async () => {
    const run = await runTool(bashTool({ cwd: dir }), {});
    expect(run.invalid).toContain('arguments.command');
  });

  it('reports a shell that cannot be started as an error', async () => {
    const run = await runTool(bashTool({ cwd: dir, shell: path.join(dir, 'no-such-shell') }), { command: 'true' });
    expect(failureOf(run)).toContain('ENOENT');
  });
});

function context(signal: AbortSignal): ToolContext {
  return {
    toolCallId: 'call-1',
    toolName: 'bash',
    signal,
    loopId: 'test.loop.1',
    scheduler: asyncScheduler,
    onUpdate: () => undefined,
    onProgress: () => undefined,
  };
}
