import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { AgentError, defineAgent, defineTool, textOf, userMessage, type AgentEvent, type Provider, type ToolResultMessage } from '../../src/index.js';
import { scriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import { addTool, model } from './helpers.js';

/** A provider shared by every session, as a real one is: it plays the turn the request's conversation is at. */
function conversationProvider(script: readonly ScriptStep[]): Provider {
  return (request, options) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    return scriptedProvider([script[turn] ?? { text: 'out of script' }])(request, options);
  };
}

const transfer = defineTool({
  name: 'transfer',
  description: 'Moves money',
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: ({ amount }) => `moved ${amount}`,
});

const results = (messages: readonly { role: string }[]): string[] =>
  messages.filter((m): m is ToolResultMessage => m.role === 'toolResult').map((m) => textOf(m));

describe('defineAgent', () => {
  it('sessions of one definition keep their own conversation and ids, run at once', async () => {
    const support = defineAgent({ model, provider: conversationProvider([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'Three.' }]), retry: false, tools: [addTool], systemPrompt: 'Add.' });
    const a = support.session({ sessionId: 'sess-a' });
    const b = support.session();
    const [answerA, answerB] = await Promise.all([a.run('1+2?'), b.run('and 1+2?')]);
    expect([answerA, answerB]).toEqual(['Three.', 'Three.']);
    expect(a.sessionId).toBe('sess-a');
    expect(b.sessionId).not.toBe('sess-a');
    expect(a.agentId).not.toBe(b.agentId);
    expect(a.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(textOf(a.messages[0] as ToolResultMessage)).toBe('1+2?');
    expect(textOf(b.messages[0] as ToolResultMessage)).toBe('and 1+2?');
    expect(results(a.messages)).toEqual(['3']);
  });

  it('aborting one session ends its run aborted; another session of the definition goes on', async () => {
    const slow: ScriptStep[] = [{ text: 'a long answer that streams slowly', chunkSize: 2, chunkDelay: 5 }];
    const support = defineAgent({ model, provider: conversationProvider(slow), retry: false });
    const a = support.session();
    const b = support.session();
    const endA = lastValueFrom(a.prompt('go').pipe(tap((e) => e.type === 'MessageUpdate' && a.abort()), toArray()));
    const endB = lastValueFrom(b.prompt('go').pipe(toArray()));
    const [eventsA, eventsB] = await Promise.all([endA, endB]);
    expect(eventsA.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'aborted' });
    expect(eventsB.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
    expect(textOf(b.messages.at(-1) as ToolResultMessage)).toBe('a long answer that streams slowly');
  });

  it('approvals belong to their session: answering one leaves the other waiting', async () => {
    const support = defineAgent({ model, provider: conversationProvider([{ toolCalls: [{ name: 'transfer', arguments: { amount: 5 }, id: 't1' }] }, { text: 'Paid.' }]), retry: false, tools: [transfer] });
    const a = support.session();
    const b = support.session();
    const waitingA = firstValueFrom(a.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')));
    const waitingB = firstValueFrom(b.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')));
    const runA = lastValueFrom(a.prompt('pay'));
    const subB = b.prompt('pay').subscribe();
    await Promise.all([waitingA, waitingB]);
    expect(a.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    expect(b.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    a.approve('t1', { approved: true });
    await runA;
    expect(results(a.messages)).toEqual(['moved 5']);
    expect(a.pendingApprovals()).toEqual([]);
    expect(b.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    expect(b.isStreaming).toBe(true);
    b.abort();
    subB.unsubscribe();
  });

  it('a session given another tool runs with it; the other sessions do not get it', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes', parameters: z.object({ s: z.string() }), execute: ({ s }) => s });
    const support = defineAgent({ model, provider: conversationProvider([{ toolCalls: [{ name: 'echo', arguments: { s: 'hi' } }] }, { text: 'ok' }]), retry: false, tools: [addTool] });
    const plain = support.session();
    const extended = support.session().withTools(echo);
    await plain.run('x');
    await extended.run('x');
    expect(results(extended.messages)).toEqual(['hi']);
    expect(results(plain.messages)[0]).toMatch(/echo/); // an unknown tool: an error result naming it
    // and a session made after them still has the definition's tools only
    const later = support.session();
    await later.run('x');
    expect(results(later.messages)[0]).toMatch(/echo/);
  });

  it('takes its options as they are when defined: changing the passed object later changes no session', async () => {
    const tools = [addTool];
    const options = { model, provider: conversationProvider([{ text: 'hi' }]), retry: false as const, tools, systemPrompt: 'First.' };
    const support = defineAgent(options);
    options.systemPrompt = 'Second.';
    tools.length = 0;
    const agent = support.session();
    expect(agent.systemPrompt).toBe('First.');
    expect(agent.toolList.map((t) => t.name)).toEqual(['add']);
    expect(support.options.systemPrompt).toBe('First.');
  });

  it('run() is one stateless run over the given conversation, through the definition', async () => {
    const support = defineAgent({ model, provider: conversationProvider([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }] }, { text: 'Four.' }]), retry: false, tools: [addTool] });
    const history = [userMessage('earlier', 0)];
    const all: AgentEvent[] = await lastValueFrom(support.run('2+2?', { messages: history, sessionId: 's1' }).pipe(toArray()));
    const end = all.at(-1);
    expect(end).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
    expect(all[0]).toMatchObject({ type: 'AgentStart', sessionId: 's1' });
    expect(history).toHaveLength(1);
    const again = await lastValueFrom(support.run('2+2?').pipe(toArray()));
    expect(again.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
  });

  it('bad options throw when defined, not at the first run', () => {
    expect(() => defineAgent({ model, tools: [addTool, addTool] })).toThrow(AgentError);
    expect(() => defineAgent({ model, tools: [addTool, addTool] })).toThrow(/Duplicate tool name "add"/);
    expect(() => defineAgent({ model, toolExecution: 'sideways' as never })).toThrow(AgentError);
    expect(() => defineAgent(null as never)).toThrow(/defineAgent: options must be an object/);
  });
});
