import { describe, expect, it } from 'vitest';
import { encodeSession, InMemorySessionStore, reportSkipped, SessionCorruptError, SessionNotFoundError, validateSession } from '../../src/session/index.js';
import type { Session, SessionListOptions, SessionStore } from '../../src/session/index.js';
import { sessionStoreContract } from '../../src/testing/index.js';
import type { ContractOptions } from '../../src/testing/index.js';

/**
 * Broken stores, each with one defect real stores have, and proof that `sessionStoreContract`
 * fails them (the real stores pass it in store-contract.test.ts).
 */

/** The contract's failing test names for one fresh store per test. */
async function contractFailures<S extends SessionStore>(makeStore: () => Promise<S>, options?: ContractOptions<S>): Promise<string[]> {
  const tests: { name: string; fn: () => Promise<void> }[] = [];
  sessionStoreContract(makeStore, { describe: (_name, fn) => fn(), it: (name, fn) => void tests.push({ name, fn }), expect }, options);
  const failed: string[] = [];
  for (const test of tests) {
    try {
      await test.fn();
    } catch {
      failed.push(test.name);
    }
  }
  return failed;
}

type Json = Record<string, unknown>;
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A correct store that lets a subclass change what is written. */
class MapStore implements SessionStore {
  protected readonly rows = new Map<string, { session: Session; seq: number }>();
  protected seq = 0;
  protected write(session: Session): Session {
    return clone(session);
  }
  async save(session: Session): Promise<void> {
    encodeSession(session, 'map');
    this.rows.set(session.sessionId, { session: this.write(session), seq: ++this.seq });
  }
  async load(sessionId: string): Promise<Session> {
    const row = this.rows.get(sessionId);
    if (!row) throw new SessionNotFoundError(sessionId, 'map');
    return validateSession(clone(row.session), sessionId, `map row "${sessionId}"`);
  }
  /** What a hand edit of the row would leave. */
  corrupt(sessionId: string): void {
    this.rows.get(sessionId)!.session = { version: 1, sessionId } as unknown as Session;
  }
  async listIds(): Promise<string[]> {
    return [...this.rows].sort(([, a], [, b]) => b.seq - a.seq).map(([id]) => id);
  }
  async delete(sessionId: string): Promise<void> {
    if (!this.rows.delete(sessionId)) throw new SessionNotFoundError(sessionId, 'map');
  }
  async listForAgent(agentId: string, options?: SessionListOptions): Promise<Session[]> {
    const out: Session[] = [];
    for (const id of await this.listIds()) {
      try {
        const session = await this.load(id);
        if (session.agentId === agentId) out.push(session);
      } catch (e) {
        if (!(e instanceof SessionCorruptError)) throw e;
        reportSkipped(e, options);
      }
    }
    return out;
  }
}

const corruptMap: ContractOptions<MapStore> = { corrupt: async (store, id) => store.corrupt(id) };

/** Writes whatever it is given: a session with a NaN saves, then never loads. */
class UncheckedStore extends MapStore {
  override async save(session: Session): Promise<void> {
    this.rows.set(session.sessionId, { session: this.write(session), seq: ++this.seq });
  }
}

/** Lists an agent's sessions by loading them all at once: one corrupt session fails the listing. */
class WholeListStore extends MapStore {
  override async listForAgent(agentId: string): Promise<Session[]> {
    const sessions = await Promise.all((await this.listIds()).map((id) => this.load(id)));
    return sessions.filter((s) => s.agentId === agentId);
  }
}

/** Caches what it loaded and never invalidates on save. */
class StaleCacheStore extends MapStore {
  private readonly cache = new Map<string, Session>();
  override async load(sessionId: string): Promise<Session> {
    const cached = this.cache.get(sessionId);
    if (cached) return clone(cached);
    const loaded = await super.load(sessionId);
    this.cache.set(sessionId, loaded);
    return clone(loaded);
  }
  override async delete(sessionId: string): Promise<void> {
    this.cache.delete(sessionId);
    return super.delete(sessionId);
  }
}

/** Stores a column layout that forgets one kind of field. */
class DroppingStore extends MapStore {
  constructor(private readonly drop: (session: Json) => void) {
    super();
  }
  protected override write(session: Session): Session {
    const copy = clone(session) as unknown as Json;
    this.drop(copy);
    return copy as unknown as Session;
  }
}

type Loop = Json & { messages: Array<Json & { content?: Json[]; usage?: Json }>; usage: Json };
const loopsOf = (s: Json) => s.loops as Loop[];
const DROPS: Record<string, (s: Json) => void> = {
  'images': (s) => loopsOf(s).forEach((l) => l.messages.forEach((m) => m.content && (m.content = m.content.filter((c) => c.type !== 'image')))),
  'assistant error messages': (s) => loopsOf(s).forEach((l) => l.messages.forEach((m) => delete m.errorMessage)),
  'extension messages': (s) => loopsOf(s).forEach((l) => (l.messages = l.messages.filter((m) => m.role !== 'extension'))),
  'parallel groups': (s) => loopsOf(s).forEach((l) => delete l.parallelGroup),
  'sub-agent links (childLoopRefs)': (s) => loopsOf(s).forEach((l) => (l.childLoopRefs = [])),
  'the inbound spawn link (parentSpawnRef)': (s) => delete s.parentSpawnRef,
  'cache usage of messages': (s) => loopsOf(s).forEach((l) => l.messages.forEach((m) => m.usage && (delete m.usage.cacheRead, delete m.usage.cacheWrite))),
  'tool-result details': (s) => loopsOf(s).forEach((l) => l.messages.forEach((m) => delete m.details)),
  'continuation kinds': (s) => loopsOf(s).forEach((l) => delete l.continuationKind),
  'thinking signatures': (s) => loopsOf(s).forEach((l) => l.messages.forEach((m) => m.content?.forEach((c) => delete c.signature))),
  'recorded event fields beyond type and time': (s) => loopsOf(s).forEach((l) => (l.events = (l.events as Json[]).map((e) => ({ type: e.type, timestamp: e.timestamp })))),
};

/** Random macrotask turns: a write in parts, as a store over several keys or rows does it. */
const someTurns = async () => {
  for (let n = Math.floor(Math.random() * 3); n > 0; n--) await new Promise((resolve) => setTimeout(resolve, 0));
};

/** Writes the header and each loop as separate rows: concurrent saves interleave. */
class TearingStore implements SessionStore {
  private readonly headers = new Map<string, { header: Omit<Session, 'loops'>; loopCount: number; seq: number }>();
  private readonly loops = new Map<string, Session['loops']>();
  private seq = 0;
  async save(session: Session): Promise<void> {
    const { loops, ...header } = clone(session);
    await someTurns();
    this.headers.set(session.sessionId, { header, loopCount: loops.length, seq: ++this.seq });
    const rows = this.loops.get(session.sessionId) ?? [];
    this.loops.set(session.sessionId, rows);
    for (const [i, loop] of loops.entries()) {
      await someTurns();
      rows[i] = loop;
    }
  }
  async load(sessionId: string): Promise<Session> {
    const row = this.headers.get(sessionId);
    if (!row) throw new SessionNotFoundError(sessionId, 'rows');
    return clone({ ...row.header, loops: (this.loops.get(sessionId) ?? []).slice(0, row.loopCount) } as Session);
  }
  async listIds(): Promise<string[]> {
    return [...this.headers].sort(([, a], [, b]) => b.seq - a.seq).map(([id]) => id);
  }
  async delete(sessionId: string): Promise<void> {
    if (!this.headers.delete(sessionId)) throw new SessionNotFoundError(sessionId, 'rows');
    this.loops.delete(sessionId);
  }
  async listForAgent(agentId: string): Promise<Session[]> {
    const ids = (await this.listIds()).filter((id) => this.headers.get(id)!.header.agentId === agentId);
    return Promise.all(ids.map((id) => this.load(id)));
  }
}

describe('sessionStoreContract catches broken stores', () => {
  it('passes a correct store (the harness itself is sound)', async () => {
    expect(await contractFailures(async () => new MapStore(), corruptMap)).toEqual([]);
    expect(await contractFailures(async () => new InMemorySessionStore())).toEqual([]);
  });

  it('fails a store that saves a session it cannot load back', async () => {
    expect(await contractFailures(async () => new UncheckedStore())).toContain('refuses to save a session that would not load back (InvalidSession), and keeps what was stored');
  });

  it('fails a store whose listing fails whole on one corrupt session', async () => {
    expect(await contractFailures(async () => new WholeListStore(), corruptMap)).toEqual([
      "lists the rest of an agent's sessions when one is corrupt, and reports the corrupt one by name",
    ]);
  });

  it('fails a store that serves a stale cached copy after a second save', async () => {
    expect(await contractFailures(async () => new StaleCacheStore())).toContain('serves the latest save after a load: load, save again, load (no stale cached copy)');
  });

  it.each(Object.keys(DROPS))('fails a store that drops %s on save', async (what) => {
    const failed = await contractFailures(async () => new DroppingStore(DROPS[what]!));
    expect(failed).toContain('loads what it saved, field for field (images, errors, extension messages, cache usage, links, parallel groups)');
  });

  it('fails a store whose concurrent saves tear, in at least 9 runs of 10', async () => {
    let caught = 0;
    for (let run = 0; run < 10; run++) {
      const failed = await contractFailures(async () => new TearingStore());
      if (failed.includes('never tears concurrent saves of one session: every load, during and after, is one version whole')) caught++;
    }
    console.log(`tearing store caught in ${caught} of 10 contract runs`);
    expect(caught).toBeGreaterThanOrEqual(9);
  }, 60_000);
});
