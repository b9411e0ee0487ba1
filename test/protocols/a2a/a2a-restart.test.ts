import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TASK_STATE } from '../../../src/protocols/a2a/index.js';
import { clientFor, collect, send, stateOf, taskOf, textOf } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const children: ChildProcess[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts the server process on the store and resolves its URL and pid. */
function startServer(store: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', path.join(here, 'fixtures/a2a-server-process.ts'), store], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^(http:\/\/\S+)\n/.exec(out);
      if (line) resolve({ url: line[1]!, child });
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`the server process exited (${code}) before listening: ${err}`)));
  });
}

const answerOf = (rs: Awaited<ReturnType<typeof collect>>): string =>
  rs.flatMap((r) => (r.payload?.$case === 'artifactUpdate' ? [textOf({ parts: r.payload.value.artifact!.parts } as never)] : [])).join('');

describe('a2aServer restarted: a new process on the same file store', () => {
  it('the context\'s conversation continues after the first process was killed', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'phi-a2a-restart-'));
    const first = await startServer(dir);
    const one = await collect((await clientFor(first.url, 'JSONRPC')).sendMessageStream(send('My name is Ada.')));
    expect(stateOf(one.at(-1)!)).toBe(TASK_STATE.completed);
    expect(answerOf(one)).toBe(`pid ${first.child.pid} heard: My name is Ada.`);
    const { contextId } = taskOf(one);
    first.child.kill('SIGKILL');

    const second = await startServer(dir);
    expect(second.child.pid).not.toBe(first.child.pid);
    const two = await collect((await clientFor(second.url, 'HTTP+JSON')).sendMessageStream(send('What is my name?', { contextId })));
    expect(stateOf(two.at(-1)!)).toBe(TASK_STATE.completed);
    expect(answerOf(two)).toBe(`pid ${second.child.pid} heard: My name is Ada. | What is my name?`);
  }, 60_000);
});
