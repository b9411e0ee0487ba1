import type { Session } from '../session/model.js';
import { isSessionStoreError, type SessionStore, type SessionStoreErrorCode } from '../session/store.js';

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
    it('loads what it saved, field for field', async () => {
      const store = await makeStore();
      const session = sampleSession('s-1', 'agent-a');
      await store.save(session);
      expect(await store.load('s-1')).toEqual(session);
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

    it('ends concurrent saves of one session with one of them whole', async () => {
      const store = await makeStore();
      const versions = ['v1', 'v2', 'v3', 'v4'].map((tag) => sampleSession('same', 'agent-a', tag));
      await Promise.all(versions.map((s) => store.save(s)));
      const loaded = await store.load('same');
      const tag = (loaded.loops[0]!.metadata as { note?: unknown } | undefined)?.note;
      expect(loaded).toEqual(versions.find((v) => (v.loops[0]!.metadata as { note: string }).note === tag));
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

/**
 * A small but complete session: two loops (one continuing the other), tool calls and results,
 * usage, events, a cross-session child link. `tag` varies the content.
 */
export function sampleSession(sessionId: string, agentId: string, tag = 'first'): Session {
  const loop1 = `${sessionId}.default.1`;
  const loop2 = `${sessionId}.default.2`;
  const usage = { input: 12, output: 7, reasoning: 2, cacheRead: 3, cacheWrite: 0, totalTokens: 22 };
  return {
    version: 1,
    sessionId,
    agentId,
    createdAt: 1_000,
    lastActiveAt: 1_900,
    formation: { kind: 'firstLoop', timestamp: 1_000 },
    loops: [
      {
        loopId: loop1,
        sessionId,
        agentId,
        startedAt: 1_000,
        endedAt: 1_500,
        status: 'completed',
        stopReason: 'stop',
        messages: [
          { role: 'user', content: [{ type: 'text', text: `What is 2+2? (${tag})` }], timestamp: 1_001 },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Add them.', signature: 'sig-1' },
              { type: 'toolCall', id: 'call_1', name: 'add', arguments: { a: 2, b: 2 } },
            ],
            stopReason: 'toolUse',
            model: 'm',
            provider: 'p',
            usage,
            timestamp: 1_100,
            turnId: { loopId: loop1, turnIndex: 0 },
          },
          {
            role: 'toolResult',
            toolCallId: 'call_1',
            toolName: 'add',
            content: [{ type: 'text', text: '4' }],
            isError: false,
            timestamp: 1_200,
            details: { exitCode: 0 },
          },
          { role: 'assistant', content: [{ type: 'text', text: 'It is 4.' }], stopReason: 'stop', model: 'm', provider: 'p', usage, timestamp: 1_300 },
        ],
        usage: { input: 24, output: 14, reasoning: 4, cacheRead: 6, cacheWrite: 0, totalTokens: 44 },
        metadata: { note: tag },
        events: [
          { type: 'AgentStart', agentId, sessionId, loopId: loop1, timestamp: 1_000 },
          { type: 'TurnStart', loopId: loop1, turnIndex: 0, timestamp: 1_001, triggeredBy: 'user' },
        ],
        childrenLoopIds: [loop2],
        childLoopRefs: [{ toolCallId: 'call_1', toolName: 'add', childLoopId: 'sub.sub.1', childSessionId: 'sub' }],
      },
      {
        loopId: loop2,
        sessionId,
        agentId,
        parentLoopId: loop1,
        continuationKind: { kind: 'default' },
        startedAt: 1_600,
        endedAt: 1_900,
        status: 'rejected',
        stopReason: 'stop',
        rejection: 'blocked by filter',
        messages: [{ role: 'extension', kind: 'note', data: { tag }, timestamp: 1_650 }],
        usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
        events: [],
        childrenLoopIds: [],
        childLoopRefs: [],
        parallelGroup: {
          allLoopIds: [loop2, `${sessionId}.other.1`],
          selectedLoopId: loop2,
          selectedConfigIndex: 0,
          evaluationUsage: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
          isSelected: true,
        },
      },
    ],
  };
}
