import type { Session } from '../session/model.js';
import { isSessionStoreError, type SessionStore, type SessionStoreErrorCode } from '../session/store.js';
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

/**
 * The behaviour every SessionStore must have, as a test suite for your test framework. Run it
 * against your own store to know it can stand in for FileSessionStore:
 *
 * @example
 * import { describe, it, expect } from 'vitest';
 * import { sessionStoreContract } from 'phi-rx/testing';
 * sessionStoreContract(async () => new PostgresSessionStore(await freshSchema()), { describe, it, expect });
 *
 * `makeStore` is called once per test and must return an empty store.
 */
export function sessionStoreContract(makeStore: () => Promise<SessionStore>, t: ContractTestApi): void {
  const { describe, it, expect } = t;

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
