import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Low, type Adapter } from 'lowdb';
import type { Session } from './model.js';
import {
  InvalidSessionIdError,
  SessionCorruptError,
  SessionLockedError,
  SessionNotFoundError,
  encodeSession,
  reportSkipped,
  validateSession,
  type SessionListOptions,
  type SessionStore,
} from './store.js';

export interface FileSessionStoreOptions {
  /** How long a writer waits for another writer's lock before SessionLockedError. Default 5000 ms. */
  lockTimeoutMs?: number;
  /** How often a waiting writer looks at the lock again. Default 50 ms. */
  pollMs?: number;
}

/** File names stay inside the directory: no separators, no leading dot, nothing a shell would mangle. */
const SAFE_ID = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,199}$/;
/** What follows `.{id}.json.` in a temp file's name: `{pid}.{uuid}.tmp`. */
const TEMP_SUFFIX = /^\d+\.[0-9a-f-]{36}\.tmp$/;
/** An unreadable lock younger than this is a writer between creating and filling it. */
const UNREADABLE_LOCK_GRACE_MS = 1_000;

/**
 * The default SessionStore: a flat directory with one pretty-printed JSON file per session,
 * `{dir}/{sessionId}.json`, no index (spec 000 §1), read and written through lowdb.
 *
 * - Writes are atomic: the JSON goes to a hidden temp file that is fsynced and then renamed over
 *   the session file, so a reader (or a process killed mid-write) sees the old file or the new
 *   one, never a torn one. lowdb's own JSONFile adapter (steno) renames too but never fsyncs and
 *   uses one fixed temp name per file, which two processes would share; hence our own adapter.
 * - Writers of one session exclude each other, across processes, with an advisory lock file
 *   `{sessionId}.lock` created with O_EXCL and holding the writer's pid. A writer waits up to
 *   `lockTimeoutMs` (polling every `pollMs`), then fails with SessionLockedError. A lock left by
 *   a dead process on this host is broken, and the temp files it left are swept. Readers take no
 *   lock: rename makes every read see a complete file.
 * - `listIds` is newest first by file modification time; the store stamps each file's mtime
 *   itself (strictly increasing within a process), so the order holds on coarse file-system clocks.
 */
export class FileSessionStore implements SessionStore {
  readonly dir: string;
  private readonly lockTimeoutMs: number;
  private readonly pollMs: number;

  constructor(dir: string, options: FileSessionStoreOptions = {}) {
    this.dir = dir;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5_000;
    this.pollMs = options.pollMs ?? 50;
    if (!(this.lockTimeoutMs >= 0)) throw new RangeError(`lockTimeoutMs must be >= 0, got ${this.lockTimeoutMs}`);
    if (!(this.pollMs > 0)) throw new RangeError(`pollMs must be > 0, got ${this.pollMs}`);
  }

  /** The file a session lives in. */
  fileOf(sessionId: string): string {
    checkId(sessionId);
    return join(this.dir, `${sessionId}.json`);
  }

  async save(session: Session): Promise<void> {
    const file = this.fileOf(session.sessionId);
    encodeSession(session, file);
    await mkdir(this.dir, { recursive: true });
    await this.withLock(session.sessionId, () => new Low<Session>(new AtomicJsonFile<Session>(file), session).write());
  }

  async load(sessionId: string): Promise<Session> {
    const file = this.fileOf(sessionId);
    const raw = await this.readRaw(sessionId, file);
    if (raw === null) throw new SessionNotFoundError(sessionId, this.dir);
    return validateSession(raw, sessionId, file);
  }

  /**
   * Read-modify-write under the session's lock: `fn` gets the stored session (undefined when there
   * is none) and returns the one to store. Concurrent updates from any number of processes apply
   * one after another, none lost.
   */
  async update(sessionId: string, fn: (current: Session | undefined) => Session | Promise<Session>): Promise<Session> {
    const file = this.fileOf(sessionId);
    await mkdir(this.dir, { recursive: true });
    return this.withLock(sessionId, async () => {
      const raw = await this.readRaw(sessionId, file);
      const next = await fn(raw === null ? undefined : validateSession(raw, sessionId, file));
      if (next.sessionId !== sessionId) {
        throw new InvalidSessionIdError(next.sessionId, `update of "${sessionId}" returned a session with another id`);
      }
      encodeSession(next, file);
      await new Low<Session>(new AtomicJsonFile<Session>(file), next).write();
      return next;
    });
  }

  async listIds(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return [];
      throw e;
    }
    const entries: Array<{ id: string; mtimeNs: bigint }> = [];
    await Promise.all(
      names.map(async (name) => {
        // Temp files are dot-files and locks are not .json: neither is ever listed.
        if (!name.endsWith('.json') || name.startsWith('.')) return;
        try {
          const s = await stat(join(this.dir, name), { bigint: true });
          if (s.isFile()) entries.push({ id: name.slice(0, -'.json'.length), mtimeNs: s.mtimeNs });
        } catch (e) {
          if (errnoOf(e) !== 'ENOENT') throw e; // deleted while we listed
        }
      }),
    );
    entries.sort((a, b) => (a.mtimeNs === b.mtimeNs ? compare(a.id, b.id) : a.mtimeNs > b.mtimeNs ? -1 : 1));
    return entries.map((e) => e.id);
  }

  async delete(sessionId: string): Promise<void> {
    const file = this.fileOf(sessionId);
    try {
      await stat(file);
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') throw new SessionNotFoundError(sessionId, this.dir);
      throw e;
    }
    await this.withLock(sessionId, async () => {
      try {
        await unlink(file);
      } catch (e) {
        if (errnoOf(e) === 'ENOENT') throw new SessionNotFoundError(sessionId, this.dir);
        throw e;
      }
    });
  }

  /**
   * Loads every session and keeps the agent's: a flat directory has no index to ask. A corrupt
   * file (whoever's it is) is skipped and reported to `onSkipped`, by its path.
   */
  async listForAgent(agentId: string, options?: SessionListOptions): Promise<Session[]> {
    const out: Session[] = [];
    for (const id of await this.listIds()) {
      try {
        const session = await this.load(id);
        if (session.agentId === agentId) out.push(session);
      } catch (e) {
        if (e instanceof SessionCorruptError) reportSkipped(e, options);
        else if (!(e instanceof SessionNotFoundError)) throw e; // deleted since listed
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------

  private async readRaw(sessionId: string, file: string): Promise<unknown> {
    const db = new Low<unknown>(new AtomicJsonFile<unknown>(file), null);
    try {
      await db.read();
    } catch (e) {
      if (e instanceof SyntaxError) {
        throw new SessionCorruptError(sessionId, file, `not valid JSON (${e.message})`, undefined, { cause: e });
      }
      throw e;
    }
    return db.data;
  }

  private async withLock<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const lockFile = join(this.dir, `${sessionId}.lock`);
    const lock = await this.acquire(sessionId, lockFile);
    try {
      // Only a dead writer leaves temp files behind, and it also left its lock.
      if (lock.brokeStale) await this.sweepTempFiles(sessionId);
      return await fn();
    } finally {
      await lock.release();
    }
  }

  private async acquire(sessionId: string, lockFile: string): Promise<{ brokeStale: boolean; release: () => Promise<void> }> {
    const content = JSON.stringify({ pid: process.pid, host: hostname(), token: randomUUID(), at: Date.now() });
    const started = Date.now();
    let brokeStale = false;
    for (;;) {
      try {
        const fd = await open(lockFile, 'wx');
        try {
          await fd.writeFile(content, 'utf8');
        } catch (e) {
          await unlink(lockFile).catch(ignore); // an empty lock would block everyone for the grace time
          throw e;
        } finally {
          await fd.close();
        }
        return { brokeStale, release: () => releaseLock(lockFile, content) };
      } catch (e) {
        if (errnoOf(e) !== 'EEXIST') throw e;
      }
      const held = await readLock(lockFile);
      if (held === undefined) continue; // released between our attempt and our look
      if (isStale(held) && (await breakLock(lockFile, held.text))) {
        brokeStale = true;
        continue;
      }
      const waited = Date.now() - started;
      if (waited >= this.lockTimeoutMs) throw new SessionLockedError(sessionId, lockFile, waited, describeHolder(held));
      await sleep(Math.min(this.pollMs, this.lockTimeoutMs - waited));
    }
  }

  private async sweepTempFiles(sessionId: string): Promise<void> {
    const prefix = `.${sessionId}.json.`;
    for (const name of await readdir(this.dir)) {
      if (name.startsWith(prefix) && TEMP_SUFFIX.test(name.slice(prefix.length))) await unlink(join(this.dir, name)).catch(ignore);
    }
  }
}

/**
 * A lowdb adapter for one JSON file: reads parse, writes go to a unique temp file that is
 * fsynced, stamped with a strictly increasing mtime and renamed over the target; then the
 * directory is fsynced so the rename itself survives a crash.
 */
class AtomicJsonFile<T> implements Adapter<T> {
  constructor(private readonly file: string) {}

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return null;
      throw e;
    }
    return JSON.parse(text) as T;
  }

  async write(data: T): Promise<void> {
    const dir = dirname(this.file);
    const tmp = join(dir, `.${basename(this.file)}.${process.pid}.${randomUUID()}.tmp`);
    try {
      const fd = await open(tmp, 'wx', 0o644);
      try {
        await fd.writeFile(`${JSON.stringify(data, null, 2)}\n`, 'utf8');
        const mtime = nextMtimeSeconds();
        await fd.utimes(mtime, mtime);
        await fd.sync();
      } finally {
        await fd.close();
      }
      await rename(tmp, this.file);
    } catch (e) {
      await unlink(tmp).catch(ignore);
      throw e;
    }
    await syncDir(dir);
  }
}

interface HeldLock {
  text: string;
  pid?: number;
  host?: string;
  ageMs: number;
}

async function readLock(lockFile: string): Promise<HeldLock | undefined> {
  try {
    const [text, s] = await Promise.all([readFile(lockFile, 'utf8'), stat(lockFile)]);
    const held: HeldLock = { text, ageMs: Date.now() - s.mtimeMs };
    try {
      const parsed = JSON.parse(text) as { pid?: unknown; host?: unknown };
      if (typeof parsed.pid === 'number') held.pid = parsed.pid;
      if (typeof parsed.host === 'string') held.host = parsed.host;
    } catch {
      // Empty or half-written: judged by age below.
    }
    return held;
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/** Dead pid on this host, or unreadable for longer than a live writer takes to fill it. */
function isStale(held: HeldLock): boolean {
  if (held.pid === undefined) return held.ageMs > UNREADABLE_LOCK_GRACE_MS;
  if (held.host !== undefined && held.host !== hostname()) return false; // cannot see other hosts' processes
  return !isAlive(held.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoOf(e) === 'EPERM'; // exists, owned by someone else
  }
}

/**
 * Removes a stale lock. It is renamed aside first so that only one breaker wins, and checked
 * after the move: if a live writer took the lock between our look and our move, it is put back.
 */
async function breakLock(lockFile: string, staleText: string): Promise<boolean> {
  const aside = `${lockFile}.${randomUUID()}.stale`;
  try {
    await rename(lockFile, aside);
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return true; // someone else broke it: try again
    throw e;
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== staleText) await link(aside, lockFile).catch(ignore);
  await unlink(aside).catch(ignore);
  return moved === staleText;
}

async function releaseLock(lockFile: string, content: string): Promise<void> {
  // Only our own lock: if it was (wrongly) broken and retaken, it is someone else's now.
  const text = await readFile(lockFile, 'utf8').catch(() => undefined);
  if (text === content) await unlink(lockFile).catch(ignore);
}

function describeHolder(held: HeldLock): string | undefined {
  if (held.pid === undefined) return undefined;
  return `pid ${held.pid}${held.host && held.host !== hostname() ? ` on ${held.host}` : ''}`;
}

let lastMtimeMs = 0;

/** Now, but strictly after the previous stamp, in seconds as fs.utimes takes them. */
function nextMtimeSeconds(): number {
  lastMtimeMs = Math.max(Date.now(), lastMtimeMs + 0.01);
  return lastMtimeMs / 1000;
}

async function syncDir(dir: string): Promise<void> {
  try {
    const fd = await open(dir, 'r');
    try {
      await fd.sync();
    } finally {
      await fd.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  }
}

function checkId(sessionId: string): void {
  if (typeof sessionId !== 'string' || !SAFE_ID.test(sessionId)) {
    throw new InvalidSessionIdError(
      String(sessionId),
      'a file session id is 1-200 characters of letters, digits, ".", "_", "~", "-", not starting with "."',
    );
  }
}

function errnoOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

const ignore = (): void => undefined;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
