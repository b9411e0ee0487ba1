import { describe, expect, it, vi } from 'vitest';
import { connectable, map, Subject, tap, config as rxConfig } from 'rxjs';
import { agentLoop, agentLoopContinue, userMessage, type AgentEvent, textOf } from '../../src/index.js';
import { eventLetters, scriptedProvider } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, events, model, run, testScheduler, trace } from '../agent/helpers.js';

const toolCycle = [
  { text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
  { text: 'It is 5.' },
];

describe('agentLoop event order (spec 000 §6)', () => {
  it('emits the tool cycle in order: user, assistant, tool result, assistant', async () => {
    const all = await run(toolCycle);
    expect(all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type)).toEqual([
      'AgentStart',
      'TurnStart', 'MessageStart', 'MessageEnd', // the prompt
      'MessageStart', 'MessageEnd', // assistant with a tool call
      'ToolExecutionStart', 'ToolExecutionEnd', 'MessageStart', 'MessageEnd', // tool result
      'TurnEnd',
      'TurnStart', 'MessageStart', 'MessageEnd', 'TurnEnd',
      'AgentEnd',
    ]);
    const end = agentEnd(all);
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(end.stopReason).toBe('stop');
    const result = end.messages[2]!;
    expect(result.role === 'toolResult' && textOf(result)).toBe('5');
  });

  it('streams MessageUpdate deltas between MessageStart and MessageEnd, each with a snapshot of its own', async () => {
    const all = await run([{ text: 'abcdefghijkl' }], [], {}, 'x');
    const assistantStart = all.findIndex((e) => e.type === 'MessageStart' && e.message.role === 'assistant');
    const updates = all.filter((e): e is Extract<AgentEvent, { type: 'MessageUpdate' }> => e.type === 'MessageUpdate');
    expect(updates.map((u) => u.delta)).toEqual([
      { type: 'text', contentIndex: 0, delta: 'abcd' },
      { type: 'text', contentIndex: 0, delta: 'efgh' },
      { type: 'text', contentIndex: 0, delta: 'ijkl' },
    ]);
    expect(all.indexOf(updates[0]!)).toBeGreaterThan(assistantStart);
    // Immutable snapshots: one message object per update, each showing the text so far.
    expect(new Set(updates.map((u) => u.message)).size).toBe(3);
    expect(updates.map((u) => (u.message.content[0] as { text: string }).text)).toEqual(['abcd', 'abcdefgh', 'abcdefghijkl']);
  });

  it('fires hooks in strict order around their events', async () => {
    const log: string[] = [];
    const hooks = {
      beforeLoop: () => void log.push('before_loop'),
      afterLoop: () => void log.push('after_loop'),
      beforeTurn: () => void log.push('before_turn'),
      afterTurn: () => void log.push('after_turn'),
      beforeToolExecution: () => void log.push('before_tool'),
      afterToolExecution: () => void log.push('after_tool'),
    };
    const run$ = agentLoop([userMessage('hi', 0)], context([addTool]), config(toolCycle, { hooks }));
    await new Promise<void>((resolve) =>
      run$.subscribe({ next: (e) => e.type !== 'MessageUpdate' && e.type !== 'MessageStart' && e.type !== 'MessageEnd' && log.push(e.type), complete: resolve }),
    );
    expect(log).toEqual([
      'before_loop', 'AgentStart',
      'before_turn', 'TurnStart', 'before_tool', 'ToolExecutionStart', 'ToolExecutionEnd', 'after_tool', 'TurnEnd', 'after_turn',
      'before_turn', 'TurnStart', 'TurnEnd', 'after_turn',
      'AgentEnd', 'after_loop',
    ]);
  });

  it('keeps tool results in call order even when they finish out of order', () => {
    testScheduler().run(({ cold, flush }) => {
      const slow = { ...addTool, name: 'slow', execute: () => cold('20ms (r|)', { r: 'slow' }) };
      const fast = { ...addTool, name: 'fast', execute: () => 'fast' };
      const all: AgentEvent[] = [];
      const script = [{ toolCalls: [{ name: 'slow', arguments: { a: 1, b: 1 } }, { name: 'fast', arguments: { a: 1, b: 1 } }] }, { text: 'done' }];
      agentLoop([userMessage('hi', 0)], context([slow, fast]), config(script)).subscribe((e) => all.push(e));
      flush();
      const ends = all.filter((e) => e.type === 'ToolExecutionEnd').map((e) => (e as { toolName: string }).toolName);
      expect(ends).toEqual(['fast', 'slow']); // completion order for events
      const results = agentEnd(all).messages.filter((m) => m.role === 'toolResult').map((m) => (m as { toolName: string }).toolName);
      expect(results).toEqual(['slow', 'fast']); // call order for the model
    });
  });

  it('is deterministic under TestScheduler: the same script twice yields identical events and timestamps', () => {
    const script = [
      { text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }], delay: 5, chunkDelay: 2 },
      { text: 'It is 5.', delay: 3, chunkDelay: 1 },
    ];
    const once = (): AgentEvent[] => {
      const out: AgentEvent[] = [];
      testScheduler().run(({ flush }) => {
        let n = 0;
        agentLoop([userMessage('hi', 0)], context([addTool]), config(script, { ids: () => `id-${++n}` })).subscribe((e) => out.push(e));
        flush();
      });
      return out;
    };
    const a = once();
    const b = once();
    expect(JSON.parse(JSON.stringify(b))).toEqual(JSON.parse(JSON.stringify(a)));
    // Virtual time: turn 1 = 5ms delay + 7 gaps of 2ms (8 events); turn 2 = 3ms + 3 gaps of 1ms.
    expect(a.at(-1)!.timestamp).toBe(5 + 7 * 2 + 3 + 3 * 1);
  });

  it('runs thousands of synchronous turns without growing the stack', async () => {
    const turns = 3000;
    const script = [...Array.from({ length: turns }, () => ({ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] })), { text: 'done' }];
    const depths: number[] = [];
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity; // count every frame, not the default 10
    const all = await events(
      agentLoop([userMessage('hi', 0)], context([addTool]), config(script)).pipe(
        tap((e) => e.type === 'TurnStart' && (e.turnIndex === 1 || e.turnIndex === turns) && depths.push(new Error().stack!.split('\n').length)),
      ),
    );
    Error.stackTraceLimit = limit;
    expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(turns + 1);
    expect(agentEnd(all).stopReason).toBe('stop');
    expect(depths[0]).toBeGreaterThan(20);
    expect(depths[1]).toBe(depths[0]); // the same depth at the last turn as at the second
  });

  it('lets a whole run be written as a marble diagram', () => {
    testScheduler().run(({ expectObservable }) => {
      const run$ = agentLoop([userMessage('hi', 0)], context([]), config([{ text: 'hello', delay: 10 }]));
      // AgentStart TurnStart, the prompt (Start, End); 10ms later the assistant (Start, 2 updates, End), TurnEnd, AgentEnd.
      // A group occupies as many frames as it has characters: (ATMm) spans 0-5, so 4ms more reaches frame 10.
      expectObservable(run$.pipe(eventLetters())).toBe('(ATMm) 4ms (MuumtZ|)');
    });
  });

  it('isolates a subscriber that throws: the loop and other subscribers carry on', async () => {
    const errors: unknown[] = [];
    const previous = rxConfig.onUnhandledError;
    rxConfig.onUnhandledError = (e) => errors.push(e);
    try {
      const shared$ = connectable(agentLoop([userMessage('hi', 0)], context([addTool]), config(toolCycle)), { connector: () => new Subject<AgentEvent>() });
      const seen: string[] = [];
      let completed = false;
      shared$.subscribe(() => {
        throw new Error('bad subscriber');
      });
      shared$.pipe(map((e) => e.type)).subscribe({ next: (t) => seen.push(t), complete: () => (completed = true) });
      vi.useFakeTimers();
      try {
        shared$.connect();
        vi.runAllTimers(); // RxJS reports a subscriber's throw on a timer
      } finally {
        vi.useRealTimers();
      }
      expect(completed).toBe(true);
      expect(seen.at(-1)).toBe('AgentEnd');
      expect(seen.filter((t) => t === 'TurnEnd')).toHaveLength(2);
      expect(errors.length).toBeGreaterThan(0);
      expect((errors[0] as Error).message).toBe('bad subscriber');
    } finally {
      rxConfig.onUnhandledError = previous;
    }
  });
});

describe('ids and continuations', () => {
  it('carries agent, session and loop ids, and TurnTrigger user then continuation', async () => {
    const all = await run(toolCycle);
    const start = all[0]!;
    expect(start).toMatchObject({ type: 'AgentStart', agentId: 'agent-1', sessionId: 'session-1', loopId: 'session-1.scripted.1' });
    expect(all.filter((e) => e.type === 'TurnStart').map((e) => (e as { triggeredBy: string }).triggeredBy)).toEqual(['user', 'continuation']);
    expect(all.every((e) => !('loopId' in e) || e.loopId === 'session-1.scripted.1')).toBe(true);
  });

  it('generates ids from the injected source when the context has none', async () => {
    let n = 0;
    const all = await events(agentLoop([userMessage('hi', 0)], { systemPrompt: '', messages: [], tools: [] }, config([{ text: 'ok' }], { ids: () => `gen-${++n}` })));
    expect(all[0]).toMatchObject({ agentId: 'gen-1', sessionId: 'gen-2', loopId: 'gen-3' });
  });

  it('continues with parentLoopId and continuation kinds; Branch triggers a branch turn', async () => {
    const base = [userMessage('hi', 0)];
    for (const [kind, trigger] of [[{ kind: 'default' }, 'continuation'], [{ kind: 'rerun', tag: 't' }, 'continuation'], [{ kind: 'branch', tag: 't' }, 'branch']] as const) {
      const ctx = { ...context([], base), loopId: 'session-1.scripted.2', parentLoopId: 'session-1.scripted.1', continuationKind: kind };
      const all = await events(agentLoopContinue(ctx, config([{ text: 'again' }])));
      expect(all[0]).toMatchObject({ type: 'AgentStart', parentLoopId: 'session-1.scripted.1', continuationKind: kind });
      expect(all.find((e) => e.type === 'TurnStart')).toMatchObject({ triggeredBy: trigger });
      // Existing messages are not re-emitted.
      expect(agentEnd(all).messages.map((m) => m.role)).toEqual(['assistant']);
    }
  });

  it('fails clearly when continuing without ids, with no messages, or after an assistant message with nothing queued', async () => {
    const noIds = { systemPrompt: '', messages: [userMessage('x', 0)], tools: [] };
    await expect(events(agentLoopContinue(noIds, config([])))).rejects.toMatchObject({ code: 'MissingIds', message: expect.stringContaining('agentId') });
    await expect(events(agentLoopContinue(context([], []), config([])))).rejects.toMatchObject({ code: 'InvalidContinue' });
    const assistantTail = (await run([{ text: 'ok' }], [])).find((e) => e.type === 'AgentEnd') as unknown as { messages: never[] };
    await expect(events(agentLoopContinue(context([], assistantTail.messages), config([])))).rejects.toMatchObject({
      code: 'InvalidContinue',
      message: expect.stringContaining('assistant'),
    });
  });
});

describe('interop', () => {
  it('offers an AsyncIterable view and Promises of the run', async () => {
    const { toAsyncIterable, newMessages, runToEnd } = await import('../../src/index.js');
    const types: string[] = [];
    for await (const e of toAsyncIterable(agentLoop([userMessage('hi', 0)], context([]), config([{ text: 'ok' }])))) types.push(e.type);
    expect(types[0]).toBe('AgentStart');
    expect(types.at(-1)).toBe('AgentEnd');
    const msgs = await newMessages(agentLoop([userMessage('hi', 0)], context([]), config([{ text: 'ok' }])));
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant']);
    const end = await runToEnd(agentLoop([userMessage('hi', 0)], context([]), config([{ text: 'ok' }])));
    expect(end.usage.totalTokens).toBeGreaterThan(0);
  });

  it('reports a script that ran out as an error turn naming the call', async () => {
    const all = await run([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }]);
    const end = agentEnd(all);
    expect(end.stopReason).toBe('error');
    const last = end.messages.at(-1)!;
    expect(last.role === 'assistant' && last.errorMessage).toMatch(/script has 1 turn\(s\).*call #2/);
  });

  it('uses a provider override and records the requests it sent', async () => {
    const provider = scriptedProvider([{ text: 'ok' }]);
    await events(agentLoop([userMessage('hi', 0)], context([addTool]), { model, provider }));
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['add']);
    expect(provider.requests[0]!.systemPrompt).toBe('You are a test.');
    expect(provider.requests[0]!.tools[0]!.parameters).toMatchObject({ type: 'object', required: ['a', 'b'] });
  });
});

void trace;
