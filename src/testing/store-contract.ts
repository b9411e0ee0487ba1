import type { Session } from '../session/model.js';
import { isSessionStoreError, type SessionCorruptError, type SessionStore, type SessionStoreErrorCode } from '../session/store.js';
import { sampleSession } from './sample-session.js';
import { tearingRounds } from './store-concurrency.js';

/** The few matchers the contract uses; vitest's and jest's `expect` both fit. */
export interface ContractExpect {
  (actual: unknown): { toEqual(expected: unknown): void; toBe(expected: unknown): void };
}

/** The test functions of your framework: `{ describe, it, expect }` from vitest, jest, or similar. */
export interface ContractTestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>): void;
  expect: ContractExpect;
}

/** Store-specific hooks for the cases a generic test cannot set up. */
export interface ContractOptions<S extends SessionStore> {
  /**
   * Damages the stored form of a saved session as a crash, a disk error or a hand edit would (a
   * file of invalid JSON, a row that is not a session). Without it the corrupt-listing case is not
   * run: a store nothing but `save` writes to (InMemorySessionStore) cannot hold a corrupt session.
   */
  corrupt?: (store: S, sessionId: string) => Promise<void>;
}

/** Sessions `save` must refuse: each would not load back (JSON turns the first three into null or a string). */
const UNLOADABLE: ReadonlyArray<readonly [string, (s: Session) => void]> = [
  ['a NaN token count', (s) => void ((s.loops[0]!.messages[1] as { usage: { input: number } }).usage.input = NaN)],
  ['an Infinity timestamp', (s) => void (s.createdAt = Infinity)],
  ['a Date for a timestamp', (s) => void ((s as { lastActiveAt: unknown }).lastActiveAt = new Date(5))],
  ['an unknown message role', (s) => void ((s.loops[0]!.messages[0] as { role: string }).role = 'system')],
  ['a hole in the messages', (s) => void (s.loops[0]!.messages as unknown[]).push(undefined)],
  ['no agentId', (s) => void delete (s as { agentId?: string }).agentId],
  ['a BigInt in the metadata', (s) => void (s.loops[0]!.metadata = { n: 1n })],
];

/**
 * The behaviour every SessionStore must have, as a test suite for your test framework. Run it
 * against your own store to know it can stand in for FileSessionStore:
 *
 * @example
 * import { describe, it, expect } from 'vitest';
 * import { sessionStoreContract } from 'phi-rx/testing';
 * sessionStoreContract(async () => new PostgresSessionStore(await freshSchema()), { describe, it, expect });
 *
 * `makeStore` is called once per test and must return an empty store; `options.corrupt` lets the
 * contract check that a listing survives a corrupt session.
 */
export function sessionStoreContract<S extends SessionStore>(makeStore: () => Promise<S>, t: ContractTestApi, options: ContractOptions<S> = {}): void {
  const { describe, it, expect } = t;
  const { corrupt } = options;

  describe('SessionStore contract', () => {
    it('loads what it saved, field for field (images, errors, extension messages, cache usage, links, parallel groups)', async () => {
      const store = await makeStore();
      const session = sampleSession('s-1', 'agent-a');
      await store.save(session);
      expect(await store.load('s-1')).toEqual(sampleSession('s-1', 'agent-a'));
      expect((await store.listForAgent('agent-a'))[0]).toEqual(sampleSession('s-1', 'agent-a'));
    });

    it('serves the latest save after a load: load, save again, load (no stale cached copy)', async () => {
      const store = await makeStore();
      await store.save(sampleSession('s-1', 'agent-a', 'first'));
      expect(await store.load('s-1')).toEqual(sampleSession('s-1', 'agent-a', 'first'));
      expect(await store.listForAgent('agent-a')).toEqual([sampleSession('s-1', 'agent-a', 'first')]);
      await store.save(sampleSession('s-1', 'agent-a', 'second'));
      expect(await store.load('s-1')).toEqual(sampleSession('s-1', 'agent-a', 'second'));
      expect(await store.listForAgent('agent-a')).toEqual([sampleSession('s-1', 'agent-a', 'second')]);
      await store.delete('s-1');
      expect(await errorCode(store.load('s-1'))).toBe('SessionNotFound');
    });

    it('hands out detached copies: changing a saved or loaded object changes nothing stored', async () => {
      const store = await makeStore();
      const session = sampleSession('s-1', 'agent-a');
      await store.save(session);
      session.loops[0]!.messages.length = 0;
      const loaded = await store.load('s-1');
      loaded.agentId = 'changed';
      const again = await store.load('s-1');
      expect(again.loops[0]!.messages.length).toBe(4);
      expect(again.agentId).toBe('agent-a');
    });

    it('replaces a session saved again under the same id', async () => {
      const store = await makeStore();
      await store.save(sampleSession('s-1', 'agent-a'));
      const second = sampleSession('s-1', 'agent-a', 'second');
      await store.save(second);
      expect(await store.load('s-1')).toEqual(second);
      expect(await store.listIds()).toEqual(['s-1']);
    });

    it('fails to load a missing id with SessionNotFound', async () => {
      const store = await makeStore();
      expect(await errorCode(store.load('missing'))).toBe('SessionNotFound');
    });

    it('lists nothing when empty', async () => {
      const store = await makeStore();
      expect(await store.listIds()).toEqual([]);
    });

    it('lists ids newest first, a re-saved session moving to the front', async () => {
      const store = await makeStore();
      for (const id of ['a', 'b', 'c']) await store.save(sampleSession(id, 'agent-a'));
      expect(await store.listIds()).toEqual(['c', 'b', 'a']);
      await store.save(sampleSession('a', 'agent-a', 'again'));
      expect(await store.listIds()).toEqual(['a', 'c', 'b']);
    });

    it('deletes a session, and a missing one fails with SessionNotFound', async () => {
      const store = await makeStore();
      await store.save(sampleSession('a', 'agent-a'));
      await store.save(sampleSession('b', 'agent-a'));
      await store.delete('a');
      expect(await store.listIds()).toEqual(['b']);
      expect(await errorCode(store.load('a'))).toBe('SessionNotFound');
      expect(await errorCode(store.delete('a'))).toBe('SessionNotFound');
    });

    it("lists one agent's sessions, newest first", async () => {
      const store = await makeStore();
      await store.save(sampleSession('a1', 'agent-a'));
      await store.save(sampleSession('b1', 'agent-b'));
      await store.save(sampleSession('a2', 'agent-a'));
      const sessions = await store.listForAgent('agent-a');
      expect(sessions.map((s) => s.sessionId)).toEqual(['a2', 'a1']);
      expect(sessions[0]).toEqual(sampleSession('a2', 'agent-a'));
      expect(await store.listForAgent('nobody')).toEqual([]);
    });

    it('keeps every one of many concurrent saves of different sessions', async () => {
      const store = await makeStore();
      const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
      await Promise.all(ids.map((id) => store.save(sampleSession(id, 'agent-a'))));
      expect([...(await store.listIds())].sort()).toEqual([...ids].sort());
    });

    it('refuses to save a session that would not load back (InvalidSession), and keeps what was stored', async () => {
      const store = await makeStore();
      await store.save(sampleSession('s-1', 'agent-a'));
      for (const [what, damage] of UNLOADABLE) {
        const replacing = sampleSession('s-1', 'agent-a', 'second');
        damage(replacing);
        expect({ what, saved: await errorCode(store.save(replacing)) }).toEqual({ what, saved: 'InvalidSession' });
        const fresh = sampleSession('s-new', 'agent-a');
        damage(fresh);
        expect({ what, saved: await errorCode(store.save(fresh)), load: await errorCode(store.load('s-new')) }).toEqual({
          what,
          saved: 'InvalidSession',
          load: 'SessionNotFound',
        });
      }
      expect(await store.load('s-1')).toEqual(sampleSession('s-1', 'agent-a'));
      expect(await store.listIds()).toEqual(['s-1']);
    });

    if (corrupt) {
      it("lists the rest of an agent's sessions when one is corrupt, and reports the corrupt one by name", async () => {
        const store = await makeStore();
        for (const id of ['a1', 'a2', 'a3']) await store.save(sampleSession(id, 'agent-a'));
        await corrupt(store, 'a2');
        const skipped: SessionCorruptError[] = [];
        const sessions = await store.listForAgent('agent-a', { onSkipped: (e) => skipped.push(e) });
        expect(sessions.map((s) => s.sessionId)).toEqual(['a3', 'a1']);
        expect(skipped.map((e) => ({ code: e.code, sessionId: e.sessionId, named: e.message.includes('a2') }))).toEqual([
          { code: 'SessionCorrupt', sessionId: 'a2', named: true },
        ]);
        expect(await errorCode(store.load('a2'))).toBe('SessionCorrupt');
      });
    }

    it('never tears concurrent saves of one session: every load, during and after, is one version whole', async () => {
      const store = await makeStore();
      const problem = await tearingRounds(store);
      expect(problem).toBe(undefined);
    });
  });
}

async function errorCode(p: Promise<unknown>): Promise<SessionStoreErrorCode | 'resolved' | 'untyped error'> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return isSessionStoreError(e) ? e.code : 'untyped error';
  }
}

export { sampleSession } from './sample-session.js';
