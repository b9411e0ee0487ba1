import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FileSessionStore,
  InvalidSessionIdError,
  SessionCorruptError,
  SessionLockedError,
  SessionNotFoundError,
  type Session,
} from '../../src/session/index.js';
import { sampleSession } from '../../src/testing/store-contract.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const worker = join(here, 'fixtures/store-worker.ts');

let dir: string;
const children = new Set<ChildProcess>();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'phi-rx-file-store-'));
});
afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  await rm(dir, { recursive: true, force: true });
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** A second process running the store (through tsx), with its stdout lines. */
function startWorker(args: string[], env: Record<string, string> = {}): { child: ChildProcess; lines: string[]; waitFor(line: string | RegExp): Promise<void>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', worker, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: string[] = [];
  const listeners: Array<() => void> = [];
  let stderr = '';
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  const waitFor = (line: string | RegExp): Promise<void> =>
    new Promise((res, rej) => {
      const seen = (): boolean => lines.some((l) => (typeof line === 'string' ? l === line : line.test(l)));
      if (seen()) return res();
      listeners.push(() => seen() && res());
      void exited.then((code) => (seen() ? res() : rej(new Error(`worker exited (${code}) before "${line}": ${stderr}`))));
    });
  return { child, lines, waitFor, exited };
}

async function entries(): Promise<string[]> {
  return (await readdir(join(dir))).sort();
}

describe('FileSessionStore files', () => {
  it('writes one pretty-printed JSON file per session and leaves no temp or lock file', async () => {
    const store = new FileSessionStore(dir);
    await store.save(sampleSession('s-1', 'agent'));
    await store.save(sampleSession('s-2', 'agent'));
    expect(await entries()).toEqual(['s-1.json', 's-2.json']);
    const text = await readFile(join(dir, 's-1.json'), 'utf8');
    expect(text.startsWith('{\n  "version": 1,\n  "sessionId": "s-1"')).toBe(true);
    expect(JSON.parse(text)).toEqual(sampleSession('s-1', 'agent'));
  });

  it('creates its directory on the first save and lists nothing before', async () => {
    const store = new FileSessionStore(join(dir, 'a/b'));
    expect(await store.listIds()).toEqual([]);
    await store.save(sampleSession('x', 'agent'));
    expect(await store.listIds()).toEqual(['x']);
  });

  it('refuses ids that are not safe file names', async () => {
    const store = new FileSessionStore(dir);
    for (const id of ['../escape', 'a/b', '.hidden', '', 'x'.repeat(201)]) {
      await expect(store.load(id)).rejects.toBeInstanceOf(InvalidSessionIdError);
      await expect(store.save(sampleSession(id, 'agent'))).rejects.toMatchObject({ code: 'InvalidSessionId' });
    }
    expect(await entries()).toEqual([]);
  });

  it('reports a file that is not JSON as corrupt, naming the file', async () => {
    await writeFile(join(dir, 'bad.json'), '{"version": 1, "sessionId": "bad", ');
    const error = await new FileSessionStore(dir).load('bad').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionCorruptError);
    expect(error).toMatchObject({ code: 'SessionCorrupt', file: join(dir, 'bad.json'), path: undefined });
    expect((error as Error).message).toContain(`${join(dir, 'bad.json')} is corrupt: not valid JSON`);
  });

  it('reports a session that fails the schema as corrupt, naming the file and the first invalid path', async () => {
    const session = sampleSession('s', 'agent') as unknown as { loops: Array<{ messages: Array<{ content: Array<{ type: string }> }> }> };
    session.loops[0]!.messages[1]!.content[1]!.type = 'toolcall';
    await writeFile(join(dir, 's.json'), JSON.stringify(session));
    const error = await new FileSessionStore(dir).load('s').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionCorruptError);
    expect((error as SessionCorruptError).path).toBe('session.loops[0].messages[1].content[1].type');
    expect((error as Error).message).toContain(join(dir, 's.json'));
    expect((error as Error).message).toContain('session.loops[0].messages[1].content[1].type');
  });

  it('reports a file holding another session id as corrupt', async () => {
    await writeFile(join(dir, 'a.json'), JSON.stringify(sampleSession('b', 'agent')));
    await expect(new FileSessionStore(dir).load('a')).rejects.toMatchObject({ code: 'SessionCorrupt', path: 'session.sessionId' });
  });

  it('skips a corrupt file in listForAgent, naming it to onSkipped (the console by default), and lists the rest', async () => {
    const store = new FileSessionStore(dir);
    await store.save(sampleSession('good', 'agent'));
    await writeFile(join(dir, 'broken.json'), 'nope');
    const skipped: SessionCorruptError[] = [];
    expect((await store.listForAgent('agent', { onSkipped: (e) => skipped.push(e) })).map((s) => s.sessionId)).toEqual(['good']);
    expect(skipped.map((e) => e.message)).toEqual([`Session file ${join(dir, 'broken.json')} is corrupt: not valid JSON (Unexpected token 'o', "nope" is not valid JSON)`]);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(await store.listForAgent('agent')).toHaveLength(1);
      expect(warn.mock.calls).toEqual([[`phi-rx: skipped a corrupt session: ${skipped[0]!.message}`]]);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses to save (or update to) a session that would not load back, naming the field', async () => {
    const store = new FileSessionStore(dir);
    const bad = sampleSession('nan', 'agent');
    bad.createdAt = Number.NaN;
    await expect(store.save(bad)).rejects.toThrow(
      `Session "nan" cannot be saved in ${join(dir, 'nan.json')}: session.createdAt: Invalid input: expected number, received null (as JSON); it would not load back, so nothing was written`,
    );
    await expect(store.load('nan')).rejects.toBeInstanceOf(SessionNotFoundError);
    await store.save(sampleSession('u', 'agent'));
    await expect(store.update('u', () => ({ ...sampleSession('u', 'agent'), lastActiveAt: Number.POSITIVE_INFINITY }))).rejects.toMatchObject({ code: 'InvalidSession' });
    expect(await store.load('u')).toEqual(sampleSession('u', 'agent'));
  });

  it('update reads, changes and writes under the lock; a missing session comes as undefined', async () => {
    const store = new FileSessionStore(dir);
    const seen: Array<Session | undefined> = [];
    await store.update('u', (s) => {
      seen.push(s);
      return sampleSession('u', 'agent', 'created');
    });
    await store.update('u', (s) => {
      seen.push(s);
      return { ...s!, agentId: 'other' };
    });
    expect(seen[0]).toBeUndefined();
    expect(seen[1]).toEqual(sampleSession('u', 'agent', 'created'));
    expect((await store.load('u')).agentId).toBe('other');
    await expect(store.update('u', () => sampleSession('v', 'agent'))).rejects.toBeInstanceOf(InvalidSessionIdError);
    expect(await entries()).toEqual(['u.json']);
  });
});

describe('FileSessionStore across processes', () => {
  it('gives SessionLockedError to a writer that cannot get the lock in time, naming the holder', async () => {
    const store = new FileSessionStore(dir, { lockTimeoutMs: 300, pollMs: 20 });
    await store.save(sampleSession('busy', 'agent', 'before'));
    const holder = startWorker(['hold', dir, 'busy', '4000']);
    await holder.waitFor('locked');
    const started = Date.now();
    const error = await store.save(sampleSession('busy', 'agent')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionLockedError);
    expect(error).toMatchObject({ code: 'SessionLocked', lockFile: join(dir, 'busy.lock'), holder: `pid ${holder.child.pid}` });
    expect((error as SessionLockedError).waitedMs).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(store.delete('busy')).rejects.toBeInstanceOf(SessionLockedError);
    holder.child.kill('SIGKILL');
    await holder.exited;
    // The holder died with its lock: the next writer breaks it.
    expect((await store.load('busy')).loops[0]!.metadata).toEqual({ note: 'before' });
    await store.save(sampleSession('busy', 'agent', 'after'));
    expect((await store.load('busy')).loops[0]!.metadata).toEqual({ note: 'after' });
    expect(await entries()).toEqual(['busy.json']);
  });

  it('waits for a lock that is released within the timeout', async () => {
    const holder = startWorker(['hold', dir, 'brief', '300']);
    await holder.waitFor('locked');
    const store = new FileSessionStore(dir, { lockTimeoutMs: 5_000, pollMs: 10 });
    await store.save(sampleSession('brief', 'agent', 'mine'));
    await holder.exited;
    expect((await store.load('brief')).loops[0]!.metadata).toEqual({ note: 'mine' });
  });

  it('breaks a stale lock left by a dead process', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    const pid = dead.pid!;
    await new Promise((res) => dead.on('exit', res));
    await writeFile(join(dir, 's.lock'), JSON.stringify({ pid, host: hostname(), token: 't', at: 0 }));
    const store = new FileSessionStore(dir, { lockTimeoutMs: 2_000 });
    const started = Date.now();
    await store.save(sampleSession('s', 'agent'));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await entries()).toEqual(['s.json']);
  });

  it('serialises read-modify-write from two processes: no update is lost', async () => {
    const together = { GO_FILE: join(dir, 'go') };
    const a = startWorker(['update', dir, 'shared', '40', 'A'], together);
    const b = startWorker(['update', dir, 'shared', '40', 'B'], together);
    await Promise.all([a.waitFor('ready'), b.waitFor('ready')]);
    await writeFile(together.GO_FILE, '');
    expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
    const session = await new FileSessionStore(dir).load('shared');
    const ids = session.loops.map((l) => l.loopId);
    expect(ids.length).toBe(80);
    await rm(together.GO_FILE);
    expect(new Set(ids)).toEqual(new Set([...Array(40).keys()].flatMap((i) => [`A.${i}`, `B.${i}`])));
    expect(await entries()).toEqual(['shared.json']);
  });

  it('never interleaves two processes saving the same session: the file is one writer\'s complete JSON', async () => {
    const together = { GO_FILE: join(dir, 'go') };
    const a = startWorker(['save', dir, 'same', '8', 'A', '400'], together);
    const b = startWorker(['save', dir, 'same', '8', 'B', '400'], together);
    await Promise.all([a.waitFor('ready'), b.waitFor('ready')]);
    await writeFile(together.GO_FILE, '');
    expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
    const session = await new FileSessionStore(dir).load('same');
    const writer = session.agentId;
    expect(['A', 'B']).toContain(writer);
    expect(session.loops.length).toBe(400);
    await rm(together.GO_FILE);
    const generation = session.createdAt;
    expect(session.loops.every((l) => l.agentId === writer && l.loopId.startsWith(`${writer}.${generation}.`))).toBe(true);
    expect(await entries()).toEqual(['same.json']);
  });

  it('survives a writer killed mid-write: old or new complete file, no temp file listed, the next writer cleans up', async () => {
    const store = new FileSessionStore(dir, { lockTimeoutMs: 2_000 });
    let killedMidWrite = false;
    for (let trial = 0; trial < 5 && !killedMidWrite; trial++) {
      const spinner = startWorker(['spin', dir, 'big', '3000']);
      await spinner.waitFor('saved 2');
      // Kill the moment a temp file shows: the writer is between creating it and renaming it.
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
        if ((await readdir(dir)).some((n) => n.endsWith('.tmp'))) break;
      }
      spinner.child.kill('SIGKILL');
      await spinner.exited;
      const savedBefore = Math.max(...spinner.lines.map((l) => Number(l.split(' ')[1])));

      const names = await entries();
      killedMidWrite = names.some((n) => n.endsWith('.tmp'));
      expect(await store.listIds()).toEqual(['big']);
      const survivor = await store.load('big');
      // The last reported save, or the one after it if its rename beat the kill.
      expect([savedBefore, savedBefore + 1]).toContain(survivor.createdAt);
      expect(survivor.loops.length).toBe(3000);
      expect(survivor.loops.every((l) => l.loopId.startsWith(`spinner.${survivor.createdAt}.`))).toBe(true);
    }
    expect(killedMidWrite).toBe(true);
    // The dead writer left its lock (and temp file): the next save breaks the lock and sweeps.
    await store.save(sampleSession('big', 'agent'));
    expect(await entries()).toEqual(['big.json']);
  });
});

describe('FileSessionStore errors', () => {
  it('throws SessionNotFoundError for a missing session on load and delete', async () => {
    await mkdir(dir, { recursive: true });
    const store = new FileSessionStore(dir);
    await expect(store.load('nope')).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(store.delete('nope')).rejects.toMatchObject({ code: 'SessionNotFound', sessionId: 'nope' });
  });
});
