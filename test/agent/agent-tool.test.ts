import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, Subject, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, agentTool, BasicAgent, defineTool, textOf, transcript, userMessage, type AgentEvent, type EventOf, type ToolResultMessage } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { agentEnd, config, context, events, model, testScheduler } from './helpers.js';

const specialist = (name: string, text: string) =>
  agentTool({ name, description: `The ${name} specialist.`, systemPrompt: `You are ${name}.`, model: scriptedModel(name), provider: scriptedProvider([{ text, chunkDelay: 10, chunkSize: 2 }]) });

const childStarts = (all: AgentEvent[]): EventOf<'AgentStart'>[] => all.filter((e): e is EventOf<'AgentStart'> => e.type === 'AgentStart' && e.parentToolCallId !== undefined);

describe('agentTool', () => {
  it('an orchestrator calls two specialists in parallel: both stream into its stream, interleaved; cancelling one call ends only that child', () => {
    testScheduler().run(({ cold, flush }) => {
      const cancels = new Subject<string>();
      const all: AgentEvent[] = [];
      const parent = config([
        { toolCalls: [{ name: 'alpha', arguments: { task: 'A' }, id: 'ca' }, { name: 'beta', arguments: { task: 'B' }, id: 'cb' }] },
        { text: 'Both reported.' },
      ], { cancelToolCalls: cancels });
      agentLoop([userMessage('go', 0)], context([specialist('alpha', 'aaaaaaaaaaaa'), specialist('beta', 'bbbbbbbbbbbb')]), parent).subscribe((e) => all.push(e));
      cold('35ms a').subscribe(() => cancels.next('cb'));
      flush();

      const events = all;
      const [alpha, beta] = childStarts(events);
      expect([alpha?.parentToolCallId, beta?.parentToolCallId]).toEqual(['ca', 'cb']);
      expect(alpha).toMatchObject({ parentLoopId: 'session-1.scripted.1' });
      // Interleaved: the children's deltas alternate in the parent's stream as they stream.
      const deltas = events.filter((e): e is EventOf<'MessageUpdate'> => e.type === 'MessageUpdate' && e.loopId !== 'session-1.scripted.1').map((e) => (e.loopId === alpha!.loopId ? 'a' : 'b'));
      expect(deltas.join('')).toMatch(/^(ab){2,}a+$/);
      // beta was cancelled at 35 ms: nothing of its loop after that, its call's result says so; alpha finished.
      const betaEvents = events.filter((e) => 'loopId' in e && e.loopId === beta!.loopId);
      expect(betaEvents.some((e) => e.type === 'AgentEnd')).toBe(false);
      const alphaEnd = events.find((e) => e.type === 'AgentEnd' && e.loopId === alpha!.loopId);
      expect(alphaEnd).toMatchObject({ stopReason: 'stop' });
      const ends = events.filter((e): e is EventOf<'ToolExecutionEnd'> => e.type === 'ToolExecutionEnd');
      expect(ends.map((e) => [e.toolCallId, textOf(e.result), e.isError])).toEqual(
        expect.arrayContaining([['ca', 'aaaaaaaaaaaa', false], ['cb', 'Tool call cancelled.', true]]),
      );
      expect(agentEnd(events.filter((e) => !('loopId' in e) || e.loopId === 'session-1.scripted.1'))).toMatchObject({ stopReason: 'stop' });
    });
  });

  it('aborting the parent ends both children where they are: no child event after the abort, the calls and the run end aborted', () => {
    testScheduler().run(({ cold, flush }) => {
      const controller = new AbortController();
      const all: AgentEvent[] = [];
      const parent = config([{ toolCalls: [{ name: 'alpha', arguments: { task: 'A' }, id: 'ca' }, { name: 'beta', arguments: { task: 'B' }, id: 'cb' }] }], { signal: controller.signal });
      agentLoop([userMessage('go', 0)], context([specialist('alpha', 'aaaaaaaaaaaa'), specialist('beta', 'bbbbbbbbbbbb')]), parent).subscribe((e) => all.push(e));
      cold('25ms a').subscribe(() => controller.abort());
      flush();
      const children = new Set(childStarts(all).map((e) => e.loopId));
      expect(children.size).toBe(2);
      const childEvents = all.filter((e) => 'loopId' in e && children.has(e.loopId));
      expect(childEvents.some((e) => e.type === 'MessageUpdate')).toBe(true);
      expect(childEvents.filter((e) => e.timestamp > 25)).toEqual([]);
      const ends = all.filter((e): e is EventOf<'ToolExecutionEnd'> => e.type === 'ToolExecutionEnd');
      expect(ends.map((e) => [e.toolCallId, e.isError])).toEqual(expect.arrayContaining([['ca', true], ['cb', true]]));
      expect(agentEnd(all.filter((e) => !('loopId' in e) || !children.has(e.loopId)))).toMatchObject({ stopReason: 'aborted' });
    });
  });

  it('with an output schema, the result is the child\'s validated structured output', async () => {
    const totals = agentTool(
      { name: 'totals', model: scriptedModel('t'), provider: scriptedProvider([{ text: '{"total": 5}' }]) },
      { output: z.object({ total: z.number() }) },
    );
    const all = await events(agentLoop([userMessage('sum', 0)], context([totals]), config([{ toolCalls: [{ name: 'totals', arguments: { task: '2+3' } }] }, { text: 'ok' }])));
    const end = all.find((e): e is EventOf<'ToolExecutionEnd'> => e.type === 'ToolExecutionEnd' && 'loopId' in e && e.loopId === 'session-1.scripted.1')!;
    expect(textOf(end.result)).toBe('{"total":5}');
    expect(end.result.details).toMatchObject({ output: { total: 5 } });
  });

  it('a child tool that needs approval asks through the parent agent\'s approval channel', async () => {
    const pay = defineTool({ name: 'pay', description: 'Pays', parameters: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `paid ${amount}` });
    const cashier = agentTool({
      name: 'cashier', model: scriptedModel('c'), tools: [pay],
      provider: scriptedProvider([{ toolCalls: [{ name: 'pay', arguments: { amount: 7 }, id: 'p1' }] }, { text: 'Paid 7.' }]),
    });
    const agent = new BasicAgent({ model, provider: scriptedProvider([{ toolCalls: [{ name: 'cashier', arguments: { task: 'pay 7' }, id: 'c1' }] }, { text: 'Done.' }]), retry: false, tools: [cashier] });
    const asked = firstValueFrom(agent.events$.pipe(filter((e): e is EventOf<'ToolApprovalRequested'> => e.type === 'ToolApprovalRequested')));
    const run = lastValueFrom(agent.prompt('pay').pipe(toArray()));
    const request = await asked;
    expect(request).toMatchObject({ toolCallId: 'p1', toolName: 'pay' });
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(['p1']);
    agent.approve('p1', { approved: true });
    const all = await run;
    expect(all.find((e) => e.type === 'ToolApprovalResolved')).toMatchObject({ toolCallId: 'p1', approved: true });
    const results = agentEnd(all.filter((e) => e.type !== 'AgentEnd' || e.loopId === (all[0] as EventOf<'AgentStart'>).loopId)).messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
    expect(results.map((m) => textOf(m))).toEqual(['Paid 7.']);
  });
});

describe('agentTool in transcript()', () => {
  it('shows each child run under the call that started it, as it streams', async () => {
    const views = await lastValueFrom(agentLoop([userMessage('go', 0)], context([specialist('alpha', 'aaaa'), specialist('beta', 'bbbb')]), config([
      { toolCalls: [{ name: 'alpha', arguments: { task: 'A' }, id: 'ca' }, { name: 'beta', arguments: { task: 'B' }, id: 'cb' }] },
      { text: 'ok' },
    ])).pipe(transcript(), toArray()));
    const last = views.at(-1)!;
    expect(last.loopId).toBe('session-1.scripted.1');
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant']); // the children's messages stay under their calls
    expect(last.toolCalls.map((t) => [t.id, t.child?.status, t.child?.messages.map((m) => textOf(m as never))])).toEqual([
      ['ca', 'ended', ['A', 'aaaa']],
      ['cb', 'ended', ['B', 'bbbb']],
    ]);
    // While they streamed, the views showed each child's partial answer under its call.
    expect(views.some((v) => v.toolCalls[0]?.child?.streaming !== undefined && v.toolCalls[1]?.child?.streaming !== undefined)).toBe(true);
  });
});
