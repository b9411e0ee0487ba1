import { describe, expect, it, vi } from 'vitest';
import {
  childrenOf,
  getLoop,
  InMemorySessionStore,
  LoopStatus,
  parallelSiblings,
  rootLoops,
  sessionQueries,
  SessionFormationPolicy,
  SessionRecorder,
  totalUsage,
  type Session,
} from '../../src/session/index.js';
import type { AgentEvent } from '../../src/types/events.js';
import { loopEvents, usage } from './events.js';

function record(events: readonly AgentEvent[], recorder = new SessionRecorder()): SessionRecorder {
  for (const e of events) recorder.onEvent(e);
  return recorder;
}

/** What must not depend on arrival order: the tree, statuses, messages, usage, links. */
function shape(sessions: Session[]): unknown {
  return sessions
    .map((s) => ({
      sessionId: s.sessionId,
      agentId: s.agentId,
      createdAt: s.createdAt,
      lastActiveAt: s.lastActiveAt,
      parentSpawnRef: s.parentSpawnRef,
      loops: s.loops.map((l) => ({
        loopId: l.loopId,
        parentLoopId: l.parentLoopId,
        status: l.status,
        startedAt: l.startedAt,
        endedAt: l.endedAt,
        messages: l.messages,
        usage: l.usage,
        childrenLoopIds: [...l.childrenLoopIds].sort(),
        childLoopRefs: l.childLoopRefs,
        parallelGroup: l.parallelGroup,
        eventTypes: l.events.map((e) => e.type).sort(),
      })),
    }))
    .sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
}

const S = 'sess-1';
const L1 = `${S}.default.1`;
const L2 = `${S}.default.2`;
const L3 = `${S}.default.3`;

describe('SessionRecorder: one loop', () => {
  it('opens a session on the first AgentStart and records the loop from Running to Completed', () => {
    const events = loopEvents({ sessionId: S, loopId: L1, t: 100, usage: usage(7, 3) });
    const recorder = new SessionRecorder();
    recorder.onEvent(events[0]!);
    expect(recorder.currentLoop(L1)?.status).toBe(LoopStatus.Running);
    record(events.slice(1), recorder);

    const session = recorder.getSession(S)!;
    expect(session).toMatchObject({ version: 1, sessionId: S, agentId: 'agent-1', createdAt: 100, lastActiveAt: 106 });
    expect(session.formation).toEqual({ kind: 'firstLoop', timestamp: 100 });
    const loop = getLoop(session, L1)!;
    expect(loop).toMatchObject({ status: 'completed', startedAt: 100, endedAt: 106, stopReason: 'stop', usage: usage(7, 3) });
    expect(loop.messages).toEqual((events.at(-1) as { messages: unknown }).messages);
    expect(recorder.currentLoop(L1)).toBeUndefined();
    expect(recorder.sessions()).toEqual([session]);
    expect(recorder.warnings).toBe(0);
  });

  it('keeps lifecycle events only, unless streaming events are opted in', () => {
    const events = loopEvents({ sessionId: S, loopId: L1, t: 0, deltas: 3, tool: { toolCallId: 'c1', toolName: 'bash' } });
    const lifecycle = record(events).getSession(S)!.loops[0]!.events;
    expect(lifecycle.map((e) => e.type)).toEqual([
      'AgentStart', 'TurnStart', 'MessageStart', 'MessageEnd', 'MessageStart', 'MessageEnd',
      'ToolExecutionStart', 'ToolExecutionEnd', 'TurnEnd', 'AgentEnd',
    ]);
    expect(lifecycle[0]).toBe(events[0]); // recorded as emitted, not copied

    const streaming = record(events, new SessionRecorder({ recordStreamingEvents: true })).getSession(S)!.loops[0]!.events;
    const updates = streaming.filter((e) => e.type === 'MessageUpdate');
    expect(updates).toEqual([0, 1, 2].map((i) => ({ type: 'MessageUpdate', loopId: L1, delta: { type: 'text', contentIndex: 0, delta: `d${i}` }, timestamp: 2 })));
    expect(streaming.filter((e) => e.type === 'ToolExecutionUpdate')).toHaveLength(1);
    expect(streaming).toHaveLength(lifecycle.length + 4);
  });

  it('marks a rejected run Rejected with its reason, and an aborted one Aborted', () => {
    const recorder = record([
      ...loopEvents({ sessionId: S, loopId: L1, t: 0, rejection: 'contains a secret' }),
      ...loopEvents({ sessionId: S, loopId: L2, t: 10, stopReason: 'aborted' }),
    ]);
    const session = recorder.getSession(S)!;
    expect(getLoop(session, L1)).toMatchObject({ status: 'rejected', rejection: 'contains a secret', messages: [] });
    expect(getLoop(session, L2)).toMatchObject({ status: 'aborted', stopReason: 'aborted' });
  });
});

describe('SessionRecorder: trees', () => {
  const continuation = [
    ...loopEvents({ sessionId: S, loopId: L1, t: 0 }),
    ...loopEvents({ sessionId: S, loopId: L2, parentLoopId: L1, t: 10 }),
    ...loopEvents({ sessionId: S, loopId: L3, parentLoopId: L1, t: 20 }),
  ];

  it('links continuations to their parent loop and answers the tree queries', () => {
    const session = record(continuation).getSession(S)!;
    expect(session.loops.map((l) => l.loopId)).toEqual([L1, L2, L3]);
    expect(getLoop(session, L1)!.childrenLoopIds).toEqual([L2, L3]);
    expect(getLoop(session, L2)).toMatchObject({ parentLoopId: L1, continuationKind: { kind: 'default' } });
    expect(rootLoops(session).map((l) => l.loopId)).toEqual([L1]);
    expect(childrenOf(session, L1).map((l) => l.loopId)).toEqual([L2, L3]);
    expect(childrenOf(session, L2)).toEqual([]);
    const q = sessionQueries(session);
    expect(q.getLoop(L3)?.loopId).toBe(L3);
    expect(q.getLoop('nope')).toBeUndefined();
    expect(q.totalUsage()).toEqual(usage(30, 15));
  });

  it('builds the same tree whatever order the events arrive in', () => {
    const inOrder = shape(record(continuation).sessions());
    const reversed = shape(record([...continuation].reverse()).sessions());
    const childrenFirst = shape(record([...continuation.slice(12), ...continuation.slice(0, 12)]).sessions());
    expect(reversed).toEqual(inOrder);
    expect(childrenFirst).toEqual(inOrder);
    expect(record([...continuation].reverse()).warnings).toBe(0);
  });

  const P = 'parent-session';
  const C = 'child-session';
  const PL = `${P}.default.1`;
  const CL = `${C}.sub.1`;
  const spawn = [
    ...loopEvents({ sessionId: P, loopId: PL, t: 0, tool: { toolCallId: 'call_7', toolName: 'delegate', childLoopId: CL } }),
    ...loopEvents({ sessionId: C, loopId: CL, parentLoopId: PL, agentId: 'sub-agent', t: 1 }),
  ];

  it('links a sub-agent in another session both ways: ChildLoopRef on the parent loop, SpawnRef on the child session', () => {
    const recorder = record(spawn);
    const parent = recorder.getSession(P)!;
    const child = recorder.getSession(C)!;
    expect(getLoop(parent, PL)!.childLoopRefs).toEqual([{ toolCallId: 'call_7', toolName: 'delegate', childLoopId: CL, childSessionId: C }]);
    expect(getLoop(parent, PL)!.childrenLoopIds).toEqual([]);
    expect(child.parentSpawnRef).toEqual({ parentSessionId: P, parentLoopId: PL, toolCallId: 'call_7', toolName: 'delegate' });
    expect(child.agentId).toBe('sub-agent');
    expect(rootLoops(child).map((l) => l.loopId)).toEqual([CL]);
  });

  it('links the sub-agent the same way in any arrival order', () => {
    const expected = shape(record(spawn).sessions());
    expect(shape(record([...spawn].reverse()).sessions())).toEqual(expected);
    const childFirst = [...spawn.filter((e) => (e as { loopId?: string }).loopId === CL), ...spawn.filter((e) => (e as { loopId?: string }).loopId !== CL)];
    expect(shape(record(childFirst).sessions())).toEqual(expected);
  });

  it('links a spawn from the tool result alone, and a bare parentLoopId alone', () => {
    const byToolOnly = record([
      ...loopEvents({ sessionId: P, loopId: PL, t: 0, tool: { toolCallId: 'call_7', toolName: 'delegate', childLoopId: CL } }),
      ...loopEvents({ sessionId: C, loopId: CL, t: 1 }),
    ]);
    expect(byToolOnly.getSession(C)!.parentSpawnRef).toEqual({ parentSessionId: P, parentLoopId: PL, toolCallId: 'call_7', toolName: 'delegate' });
    const byParentOnly = record([...loopEvents({ sessionId: P, loopId: PL, t: 0 }), ...loopEvents({ sessionId: C, loopId: CL, parentLoopId: PL, t: 1 })]);
    expect(getLoop(byParentOnly.getSession(P)!, PL)!.childLoopRefs).toEqual([{ toolCallId: '', toolName: '', childLoopId: CL, childSessionId: C }]);
    expect(byParentOnly.getSession(C)!.parentSpawnRef).toEqual({ parentSessionId: P, parentLoopId: PL, toolCallId: '', toolName: '' });
  });
});

describe('SessionRecorder: parallel groups', () => {
  const B = ['p.a.1', 'p.b.1', 'p.c.1'];
  const start: AgentEvent = { type: 'ParallelLoopStart', sessionId: S, loopIds: B, timestamp: 0 };
  const end: AgentEvent = {
    type: 'ParallelLoopEnd',
    sessionId: S,
    selectedLoopId: 'p.b.1',
    selectedConfigIndex: 1,
    evaluationUsage: usage(4, 1),
    timestamp: 50,
  };
  const branches = B.flatMap((loopId, i) => loopEvents({ sessionId: S, loopId, t: 1 + i }));

  it('announces branches as Pending, runs them, and marks the selected one', () => {
    const recorder = new SessionRecorder();
    recorder.onEvent(start);
    expect(B.map((id) => recorder.currentLoop(id)?.status)).toEqual(['pending', 'pending', 'pending']);
    record([...branches, end], recorder);
    const session = recorder.getSession(S)!;
    for (const id of B) {
      expect(getLoop(session, id)!.parallelGroup).toEqual({
        allLoopIds: B,
        selectedLoopId: 'p.b.1',
        selectedConfigIndex: 1,
        evaluationUsage: usage(4, 1),
        isSelected: id === 'p.b.1',
      });
      expect(getLoop(session, id)!.status).toBe('completed');
    }
    expect(parallelSiblings(session, 'p.b.1').map((l) => l.loopId)).toEqual(['p.a.1', 'p.c.1']);
    expect(rootLoops(session)).toHaveLength(3);
    expect(totalUsage(session)).toEqual(usage(30, 15));
  });

  it('knows the group while it runs and in any arrival order', () => {
    const running = record([start, ...branches.slice(0, 3)]);
    expect(parallelSiblings(running.getSession(S)!, 'p.a.1').map((l) => l.loopId)).toEqual(['p.b.1', 'p.c.1']);
    const expected = shape(record([start, ...branches, end]).sessions());
    expect(shape(record([end, ...branches, start]).sessions())).toEqual(expected);
    expect(shape(record([...branches, end, start].reverse()).sessions())).toEqual(expected);
  });

  it('gives a loop that ran alone no siblings', () => {
    expect(parallelSiblings(record(loopEvents({ sessionId: S, loopId: L1, t: 0 })).getSession(S)!, L1)).toEqual([]);
  });
});

describe('SessionRecorder: completion', () => {
  it('flush marks open loops Aborted, completes every session once and drainCompleted hands them over', () => {
    const afterTask = vi.fn();
    const recorder = new SessionRecorder({ afterTask });
    record([...loopEvents({ sessionId: S, loopId: L1, t: 0 }), ...loopEvents({ sessionId: S, loopId: L2, t: 10 }).slice(0, 4)], recorder);
    record(loopEvents({ sessionId: 'other', loopId: 'o.1', t: 0 }).slice(0, 2), recorder);
    recorder.flush();
    expect(getLoop(recorder.getSession(S)!, L1)!.status).toBe('completed');
    expect(getLoop(recorder.getSession(S)!, L2)!.status).toBe('aborted');
    expect(getLoop(recorder.getSession('other')!, 'o.1')!.status).toBe('aborted');
    expect(afterTask.mock.calls.map(([s]) => (s as Session).sessionId)).toEqual([S, 'other']);
    recorder.flush();
    expect(afterTask).toHaveBeenCalledTimes(2);
    expect(recorder.drainCompleted().map((s) => s.sessionId)).toEqual([S, 'other']);
    expect(recorder.sessions()).toEqual([]);
    expect(recorder.drainCompleted()).toEqual([]);
  });

  it('checkpoint completes only sessions without open loops', () => {
    const recorder = record([
      ...loopEvents({ sessionId: 'done', loopId: 'd.1', t: 0 }),
      ...loopEvents({ sessionId: 'busy', loopId: 'b.1', t: 0 }).slice(0, 3),
    ]);
    expect(recorder.checkpoint()).toBe(1);
    expect(recorder.drainCompleted().map((s) => s.sessionId)).toEqual(['done']);
    expect(recorder.currentLoop('b.1')?.status).toBe('running');
  });

  it('takes a completed session back into progress when its agent goes on before it is drained', () => {
    const recorder = record(loopEvents({ sessionId: S, loopId: L1, t: 0 }));
    recorder.checkpoint();
    record(loopEvents({ sessionId: S, loopId: L2, t: 10 }).slice(0, 1), recorder);
    expect(recorder.drainCompleted()).toEqual([]);
    expect(recorder.getSession(S)!.loops.map((l) => l.loopId)).toEqual([L1, L2]);
  });

  it('drops, and counts, held events of loops that never started when flushed', () => {
    const onWarning = vi.fn();
    const recorder = record(loopEvents({ sessionId: S, loopId: L1, t: 0 }).slice(1, 4), new SessionRecorder({ onWarning }));
    expect(recorder.warnings).toBe(0);
    recorder.flush();
    expect(recorder.warnings).toBe(1);
    expect(onWarning.mock.calls[0]![0]).toContain('dropped 3 event(s)');
  });

  it('reports totalUsage per session', () => {
    const recorder = record([
      ...loopEvents({ sessionId: S, loopId: L1, t: 0, usage: usage(100, 20) }),
      ...loopEvents({ sessionId: S, loopId: L2, t: 10, usage: usage(50, 5) }),
    ]);
    expect(recorder.totalUsage(S)).toEqual(usage(150, 25));
    expect(recorder.totalUsage('nope')).toBeUndefined();
  });
});

describe('SessionRecorder: formation policies', () => {
  it('PerSessionId keeps one record per session id, however long the pause', () => {
    const recorder = record([...loopEvents({ sessionId: S, loopId: L1, t: 0 }), ...loopEvents({ sessionId: S, loopId: L2, t: 10_000_000 })]);
    expect(recorder.sessions().map((s) => [s.sessionId, s.loops.length])).toEqual([[S, 2]]);
  });

  it('InactivityTimeout rotates after the idle time, by event timestamps, and completes the old session', () => {
    const afterTask = vi.fn();
    const beforeTask = vi.fn();
    const recorder = new SessionRecorder({ formation: SessionFormationPolicy.InactivityTimeout(1_000), afterTask, beforeTask });
    record(
      [
        ...loopEvents({ sessionId: S, loopId: L1, t: 0 }), // ends at 6
        ...loopEvents({ sessionId: S, loopId: L2, parentLoopId: L1, t: 1_006 }), // exactly the idle time: same session
        ...loopEvents({ sessionId: S, loopId: L3, parentLoopId: L2, t: 2_013 }), // 1001 ms after 1012: rotate
        ...loopEvents({ sessionId: S, loopId: 'l4', t: 2_100 }),
      ],
      recorder,
    );
    expect(recorder.sessions().map((s) => [s.sessionId, s.loops.map((l) => l.loopId)])).toEqual([
      [S, [L1, L2]],
      [`${S}~2`, [L3, 'l4']],
    ]);
    const rotated = recorder.getSession(`${S}~2`)!;
    expect(rotated.formation).toEqual({ kind: 'inactivityTimeout', timestamp: 2_013, idleMs: 1_000, previousSessionId: S });
    expect(rotated.loops[0]!.sessionId).toBe(`${S}~2`);
    expect(rootLoops(rotated).map((l) => l.loopId)).toEqual([L3, 'l4']);
    expect(getLoop(recorder.getSession(S)!, L2)!.childrenLoopIds).toEqual([]);
    expect(rotated.parentSpawnRef).toBeUndefined();
    expect(beforeTask.mock.calls.map(([s]) => (s as Session).sessionId)).toEqual([S, `${S}~2`]);
    expect(afterTask.mock.calls.map(([s]) => (s as Session).sessionId)).toEqual([S]);
    expect(recorder.drainCompleted().map((s) => s.sessionId)).toEqual([S]);
  });

  it('never rotates a session while one of its loops is open', () => {
    const recorder = new SessionRecorder({ formation: SessionFormationPolicy.InactivityTimeout(10) });
    record([...loopEvents({ sessionId: S, loopId: L1, t: 0 }).slice(0, 2), ...loopEvents({ sessionId: S, loopId: L2, t: 5_000 })], recorder);
    expect(recorder.sessions().map((s) => s.sessionId)).toEqual([S]);
  });

  it('rejects a negative idle time', () => {
    expect(() => SessionFormationPolicy.InactivityTimeout(-1)).toThrow(RangeError);
  });
});

describe('SessionRecorder: hooks and bad input', () => {
  it('calls beforeTask once when a session is first seen, with the new session', () => {
    const seen: Array<[string, number]> = [];
    record(
      [...loopEvents({ sessionId: S, loopId: L1, t: 0 }), ...loopEvents({ sessionId: S, loopId: L2, t: 10 })],
      new SessionRecorder({ beforeTask: (s) => void seen.push([s.sessionId, s.loops.length]) }),
    );
    expect(seen).toEqual([[S, 0]]);
  });

  it('survives hooks that throw or reject, counting them as warnings', async () => {
    const recorder = new SessionRecorder({
      beforeTask: () => {
        throw new Error('boom');
      },
      afterTask: () => Promise.reject(new Error('later')),
    });
    record(loopEvents({ sessionId: S, loopId: L1, t: 0 }), recorder);
    recorder.flush();
    await Promise.resolve();
    expect(recorder.warnings).toBe(2);
    expect(getLoop(recorder.getSession(S)!, L1)!.status).toBe('completed');
  });

  it('never throws on malformed, unknown or duplicate events and counts each', () => {
    const onWarning = vi.fn(() => {
      throw new Error('listener failure is contained too');
    });
    const recorder = new SessionRecorder({ onWarning });
    const bad = [
      null,
      undefined,
      42,
      { type: 'Bogus', loopId: 'x', timestamp: 0 },
      { type: 'AgentStart', agentId: 'a', loopId: 'x', timestamp: 0 },
      { type: 'TurnStart', turnIndex: 0, timestamp: 0 },
      { type: 'ParallelLoopStart', sessionId: S, loopIds: 'nope', timestamp: 0 },
    ] as unknown as AgentEvent[];
    for (const e of bad) expect(() => recorder.onEvent(e)).not.toThrow();
    const start = loopEvents({ sessionId: S, loopId: L1, t: 0 })[0]!;
    recorder.onEvent(start);
    recorder.onEvent(start);
    expect(recorder.warnings).toBe(8);
    expect(recorder.getSession(S)!.loops).toHaveLength(1);
  });
});

describe('SessionRecorder output', () => {
  it('round-trips through a store, streaming events, parallel groups and spawn links included', async () => {
    const recorder = new SessionRecorder({ recordStreamingEvents: true });
    record(
      [
        { type: 'ParallelLoopStart', sessionId: 'p', loopIds: ['p.a.1', 'p.b.1'], timestamp: 0 },
        ...loopEvents({ sessionId: 'p', loopId: 'p.a.1', t: 1, tool: { toolCallId: 'c', toolName: 'delegate', childLoopId: 'k.1' } }),
        ...loopEvents({ sessionId: 'k', loopId: 'k.1', parentLoopId: 'p.a.1', t: 2 }),
        ...loopEvents({ sessionId: 'p', loopId: 'p.b.1', t: 3 }),
        { type: 'ParallelLoopEnd', sessionId: 'p', selectedLoopId: 'p.a.1', selectedConfigIndex: 0, evaluationUsage: usage(1, 1), timestamp: 20 },
        ...loopEvents({ sessionId: 'p', loopId: 'p.x.1', parentLoopId: 'p.a.1', t: 30, rejection: 'no' }),
      ],
      recorder,
    );
    recorder.flush();
    const store = new InMemorySessionStore();
    for (const session of recorder.drainCompleted()) {
      await store.save(session);
      expect(await store.load(session.sessionId)).toEqual(JSON.parse(JSON.stringify(session)));
    }
    expect((await store.listIds()).sort()).toEqual(['k', 'p']);
  });
});

describe('SessionRecorder and MessageReset', () => {
  it('records a MessageReset (a diverging retry) in its loop, with no warning, and the session loads back', async () => {
    const events = loopEvents({ sessionId: 'sess-r', loopId: 'sess-r.c.1', t: 0 });
    const firstUpdate = events.findIndex((e) => e.type === 'MessageUpdate');
    const answer = (events[firstUpdate] as Extract<AgentEvent, { type: 'MessageUpdate' }>).message;
    events.splice(firstUpdate + 1, 0, { type: 'MessageReset', loopId: 'sess-r.c.1', message: { ...answer, content: [] }, reason: 'retryDiverged', timestamp: 2 });
    const recorder = record(events);
    recorder.flush();
    expect(recorder.warnings).toBe(0);
    const session = recorder.getSession('sess-r')!;
    expect(session.loops[0]!.events.map((e) => e.type)).toContain('MessageReset');
    const store = new InMemorySessionStore();
    await store.save(session);
    expect((await store.load('sess-r'))!.loops[0]!.events.map((e) => e.type)).toContain('MessageReset');
  });
});
