import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScriptHook, scriptHooks } from '../../src/node/index.js';
import { addTool, agentEnd, run } from './helpers.js';

let dir: string;
const script = async (name: string, body: string): Promise<string> => {
  const path = join(dir, name);
  await writeFile(path, `#!/usr/bin/env bash\n${body}\n`);
  await chmod(path, 0o755);
  return path;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'phi-rx-hooks-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const toolCycle = [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }];

describe('script hooks (spec 003)', () => {
  it('pass the JSON context on stdin; exit 0 continues', async () => {
    const log = join(dir, 'log.jsonl');
    const logger = await script('log.sh', `cat >> "${log}"; echo >> "${log}"`);
    const all = await run(toolCycle, [addTool], { hooks: scriptHooks({ beforeToolExecution: logger, afterTurn: logger }) });
    expect(agentEnd(all).stopReason).toBe('stop');
    const lines = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ hook: 'beforeToolExecution', toolName: 'add', args: { a: 1, b: 2 } });
    expect(lines.filter((l) => l.hook === 'afterTurn')).toHaveLength(2);
  });

  it('a non-zero exit vetoes a before-hook', async () => {
    const deny = await script('deny.sh', 'grep -q \'"toolName":"add"\' && exit 3; exit 0');
    const all = await run(toolCycle, [addTool], { hooks: scriptHooks({ beforeToolExecution: deny }) });
    expect(all.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ isError: true, result: { content: [{ text: 'Tool execution skipped by before_tool_execution hook.' }] } });
  });

  it('a script that hangs is killed at its timeout, reported, and treated as continue', async () => {
    const hang = await script('hang.sh', 'sleep 30');
    const started = Date.now();
    const all = await run(toolCycle, [addTool], { hooks: scriptHooks({ beforeTurn: hang }, { timeoutMs: 300 }) });
    expect(Date.now() - started).toBeLessThan(5_000);
    const errors = all.filter((e) => e.type === 'HookError');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ hook: 'beforeTurn', message: expect.stringContaining('timed out after 300ms') });
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('a script that crashes in an after-hook is reported and the run goes on', async () => {
    const crash = await script('crash.sh', 'kill -SEGV $$');
    const all = await run(toolCycle, [addTool], { hooks: scriptHooks({ afterToolExecution: crash }) });
    expect(all.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'afterToolExecution', message: expect.stringContaining('SIGSEGV') });
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('reports a command that cannot run', async () => {
    await expect(runScriptHook(join(dir, 'missing.sh'), { hook: 'beforeTurn' })).resolves.toBe(false); // bash exits 127
  });
});
