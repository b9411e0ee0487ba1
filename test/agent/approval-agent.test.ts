import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { AgentError, BasicAgent, defineTool, textOf, type AgentEvent, type ToolResultMessage } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { InMemorySessionStore } from '../../src/session/index.js';
import { addTool, model } from './helpers.js';

const transfer = defineTool({
  name: 'transfer',
  description: 'Moves money',
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  allowEdits: true,
  execute: ({ amount }) => `moved ${amount}`,
});

const script = [
  { toolCalls: [{ name: 'transfer', arguments: { amount: 50 }, id: 't1' }, { name: 'transfer', arguments: { amount: 900 }, id: 't2' }, { name: 'add', arguments: { a: 1, b: 2 }, id: 'a1' }] },
  { text: 'Done.' },
];

const agentFor = (steps = script) => new BasicAgent({ model, provider: scriptedProvider(steps), retry: false, tools: [transfer, addTool], agentId: 'agent-a', sessionId: 'sess-a' });

const resultsOf = (messages: readonly { role: string }[]): Record<string, string> =>
  Object.fromEntries(messages.filter((m): m is ToolResultMessage => m.role === 'toolResult').map((m) => [m.toolCallId, textOf(m)]));

describe('BasicAgent.approve', () => {
  it('lists waiting calls and answers them: one approved with edited args, one denied; the model sees both', async () => {
    const agent = agentFor();
    const seen: AgentEvent[] = [];
    const run$ = agent.prompt('pay').pipe(
      tap((e) => {
        seen.push(e);
        if (e.type === 'ToolExecutionEnd' && e.toolCallId === 'a1') {
          queueMicrotask(() => {
            expect(agent.pendingApprovals().map((p) => [p.toolCallId, p.toolName, p.args])).toEqual([['t1', 'transfer', { amount: 50 }], ['t2', 'transfer', { amount: 900 }]]);
            agent.approve('t1', { approved: true, args: { amount: 40 } });
            agent.approve('t2', { approved: false, reason: 'too much' });
          });
        }
      }),
    );
    await lastValueFrom(run$);
    expect(agent.pendingApprovals()).toEqual([]);
    expect(resultsOf(agent.messages)).toEqual({ t1: 'moved 40', t2: 'Tool call "transfer" was denied: too much', a1: '3' });
    expect(textOf(agent.messages.at(-1) as ToolResultMessage)).toBe('Done.');
  });

  it('an unknown id, a call not waiting, or a malformed answer throws a clear AgentError', async () => {
    const agent = agentFor();
    expect(() => agent.approve('nope', { approved: true })).toThrow(/approve\("nope"\): no tool call with this id is waiting for approval \(none is waiting\)/);
    const run$ = agent.prompt('pay');
    await firstValueFrom(run$.pipe(filter((e) => e.type === 'ToolApprovalRequested' && e.toolCallId === 't2')));
    const err = (() => { try { agent.approve('a1', { approved: true }); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('UnknownToolCall');
    expect((err as AgentError).message).toContain('waiting: t1, t2');
    expect(() => agent.approve('t1', { approved: 'yes' } as never)).toThrow('approve("t1", …): approved must be true or false, got string');
    expect(() => agent.approve('t1', { approved: true, args: [1] } as never)).toThrow(/args must be an object/);
    agent.abort();
  });

  it('abort while calls wait: aborted results, AgentEnd aborted, nothing left pending', async () => {
    const agent = agentFor();
    const all = await lastValueFrom(agent.prompt('pay').pipe(tap((e) => e.type === 'ToolApprovalRequested' && e.toolCallId === 't2' && queueMicrotask(() => agent.abort())), toArray()));
    expect(all.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'aborted' });
    expect(resultsOf(agent.messages)).toMatchObject({ t1: 'Tool execution aborted.', t2: 'Tool execution aborted.' });
    expect(agent.pendingApprovals()).toEqual([]);
  });

  it('save() while calls wait and restore() in a fresh agent: pendingApprovals lists them, approve resumes the run', async () => {
    const store = new InMemorySessionStore();
    const first = agentFor();
    const addDone = firstValueFrom(first.events$.pipe(filter((e) => e.type === 'ToolExecutionEnd' && e.toolCallId === 'a1')));
    const sub = first.prompt('pay').subscribe();
    await addDone;
    await first.save(store);
    sub.unsubscribe(); // the process "dies": the run is torn down without an end

    const provider = scriptedProvider([script[1]!]);
    const second = new BasicAgent({ model, provider, retry: false, tools: [transfer, addTool], agentId: 'agent-a' });
    await second.restore(store, 'sess-a');
    expect(second.sessionId).toBe('sess-a');
    expect(second.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1', 't2']);
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    const resumed$ = second.approve('t1', { approved: true });
    // The other waiting call is asked again in the resumed run; answer it there.
    await firstValueFrom(resumed$.pipe(filter((e) => e.type === 'ToolApprovalRequested' && e.toolCallId === 't2')));
    expect(second.approve('t2', { approved: false, reason: 'no' })).toBeDefined();
    const end = await lastValueFrom(resumed$);
    expect(end).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
    expect(resultsOf(second.messages)).toEqual({ a1: '3', t1: 'moved 50', t2: 'Tool call "transfer" was denied: no' });
    const sent = provider.requests[0]!.messages.filter((m) => m.role === 'toolResult').map((m) => (m as ToolResultMessage).toolCallId);
    expect(sent.sort()).toEqual(['a1', 't1', 't2']);
    expect(second.lastLoopId).toBe(end.type === 'AgentEnd' ? end.loopId : '');
    expect(second.lastLoopId).toMatch(/^sess-a\..+\.2$/);
  });
});

describe('BasicAgent.approve after restore, sequential dispatch', () => {
  it('an answer for a call the resumed run reaches only later is kept until it asks', async () => {
    const store = new InMemorySessionStore();
    const first = agentFor(); // parallel: both transfers wait when the session is saved
    const asked = firstValueFrom(first.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested' && e.toolCallId === 't2')));
    const sub = first.prompt('pay').subscribe();
    await asked;
    await first.save(store);
    sub.unsubscribe();

    const slowTransfer = defineTool({
      name: 'transfer', description: 'Moves money', parameters: z.object({ amount: z.number() }), needsApproval: true,
      execute: ({ amount }) => new Promise<string>((resolve) => setTimeout(() => resolve(`moved ${amount}`), 20)),
    });
    const second = new BasicAgent({ model, provider: scriptedProvider([script[1]!]), retry: false, tools: [slowTransfer, addTool], agentId: 'agent-a', toolExecution: 'sequential' });
    await second.restore(store, 'sess-a');
    expect(second.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1', 't2']);
    const resumed$ = second.approve('t1', { approved: true });
    // The resumed run is running t1; it asks for t2 only after t1 is done. The answer waits for it.
    expect(second.isStreaming).toBe(true);
    expect(second.approve('t2', { approved: false, reason: 'later' })).toBeDefined();
    await lastValueFrom(resumed$);
    expect(resultsOf(second.messages)).toEqual({ t1: 'moved 50', t2: 'Tool call "transfer" was denied: later', a1: '3' });
    expect(second.pendingApprovals()).toEqual([]);
  });
});

describe('BasicAgent.reset', () => {
  it('forgets approvals a restored session left waiting', async () => {
    const store = new InMemorySessionStore();
    const first = agentFor();
    const asked = firstValueFrom(first.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')));
    const sub = first.prompt('pay').subscribe();
    await asked;
    await first.save(store);
    sub.unsubscribe();
    const second = agentFor([]);
    await second.restore(store, 'sess-a');
    expect(second.pendingApprovals()).toHaveLength(2);
    second.reset();
    expect(second.pendingApprovals()).toEqual([]);
    expect(second.messages).toEqual([]);
    expect(() => second.approve('t1', { approved: true })).toThrow(/UnknownToolCall|no tool call with this id/);
    expect((await second.save(store)).loops).toEqual([]);
  });

  it('reset() during a run: the aborted run ends, and its last events are not recorded into the new session', async () => {
    const agent = agentFor();
    const waiting = firstValueFrom(agent.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')));
    const ended = lastValueFrom(agent.prompt('Pay').pipe(toArray()));
    await waiting;
    agent.reset();
    const events = await ended;
    expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'aborted' });
    expect(agent.messages).toEqual([]);
    const store = new InMemorySessionStore();
    expect((await agent.save(store)).loops).toEqual([]);
    expect(agent.pendingApprovals()).toEqual([]);
  });
});
