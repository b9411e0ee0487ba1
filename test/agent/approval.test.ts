import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { z } from 'zod';
import {
  agentLoop, AgentError, defineTool, textOf, userMessage, type AgentEvent, type AgentMessage, type ApprovalAnswer, type ToolResultMessage,
} from '../../src/index.js';
import { describeEvent } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, events } from './helpers.js';

const guarded = defineTool({
  name: 'transfer',
  description: 'Moves money',
  parameters: z.object({ amount: z.number().max(100) }),
  needsApproval: true,
  allowEdits: true,
  execute: ({ amount }) => `moved ${amount}`,
});

const twoCalls = [
  { toolCalls: [{ name: 'transfer', arguments: { amount: 50 }, id: 't1' }, { name: 'add', arguments: { a: 1, b: 2 }, id: 'a1' }] },
  { text: 'Done.' },
];

const results = (all: AgentEvent[]): Record<string, { text: string; isError: boolean }> =>
  Object.fromEntries(
    agentEnd(all).messages.filter((m): m is ToolResultMessage => m.role === 'toolResult').map((m) => [m.toolCallId, { text: textOf(m), isError: m.isError }]),
  );

const visible = (all: AgentEvent[]): string[] =>
  all.filter((e) => e.type !== 'MessageUpdate' && e.type !== 'MessageStart' && e.type !== 'TurnStart' && e.type !== 'TurnEnd').map(describeEvent);

describe('tool approval in agentLoop', () => {
  it('a call that needs approval waits for the answer; the other call of the parallel batch goes on', async () => {
    const answers = new Subject<ApprovalAnswer>();
    const run$ = agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { approval: { answers } })).pipe(
      tap((e) => {
        // Answer only once the other call has finished: it did not wait for this one.
        if (e.type === 'ToolExecutionEnd' && e.toolCallId === 'a1') queueMicrotask(() => answers.next({ toolCallId: 't1', approved: true }));
      }),
    );
    const all = await lastValueFrom(run$.pipe(toArray()));
    const requested = all.findIndex((e) => e.type === 'ToolApprovalRequested');
    const addEnd = all.findIndex((e) => e.type === 'ToolExecutionEnd' && e.toolCallId === 'a1');
    const resolved = all.findIndex((e) => e.type === 'ToolApprovalResolved');
    expect(requested).toBeGreaterThan(0);
    expect(addEnd).toBeGreaterThan(requested);
    expect(resolved).toBeGreaterThan(addEnd);
    expect(all[requested]).toMatchObject({ type: 'ToolApprovalRequested', toolCallId: 't1', toolName: 'transfer', args: { amount: 50 } });
    expect(all[resolved]).toMatchObject({ type: 'ToolApprovalResolved', toolCallId: 't1', approved: true });
    expect(results(all)).toEqual({ t1: { text: 'moved 50', isError: false }, a1: { text: '3', isError: false } });
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('a denial becomes an error result with the reason, which the model sees in its next request', async () => {
    const cfg = config(twoCalls, { approval: { decide: () => ({ approved: false, reason: 'over the daily limit' }) } });
    const all = await events(agentLoop([userMessage('pay', 0)], context([guarded, addTool]), cfg));
    expect(results(all).t1).toEqual({ text: 'Tool call "transfer" was denied: over the daily limit', isError: true });
    expect(visible(all)).toContain('ToolApprovalResolved:transfer:denied');
    const sent = cfg.provider.requests[1]!.messages.find((m) => m.role === 'toolResult' && m.toolCallId === 't1');
    expect(sent && textOf(sent)).toContain('over the daily limit');
  });

  it('approved with edited arguments runs with them; edited arguments that fail validation give an error naming the field', async () => {
    const edited = await events(
      agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { approval: { decide: () => ({ approved: true, args: { amount: 20 } }) } })),
    );
    expect(results(edited).t1).toEqual({ text: 'moved 20', isError: false });
    expect(edited.find((e) => e.type === 'ToolApprovalResolved')).toMatchObject({ approved: true, args: { amount: 20 } });
    expect(edited.find((e) => e.type === 'ToolExecutionStart' && e.toolCallId === 't1')).toMatchObject({ args: { amount: 20 } });

    const bad = await events(
      agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { approval: { decide: () => ({ approved: true, args: { amount: 'lots' } }) } })),
    );
    expect(results(bad).t1!.isError).toBe(true);
    expect(results(bad).t1!.text).toMatch(/^Tool call "transfer" was denied: the edited arguments are invalid: arguments\.amount: /);
  });

  it('sequential dispatch: later calls wait in order behind the call waiting for approval', async () => {
    const answers = new Subject<ApprovalAnswer>();
    const run$ = agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { toolExecution: 'sequential', approval: { answers } })).pipe(
      tap((e) => {
        if (e.type === 'ToolApprovalRequested') queueMicrotask(() => answers.next({ toolCallId: e.toolCallId, approved: false }));
      }),
    );
    const all = await lastValueFrom(run$.pipe(toArray()));
    const tools = visible(all).filter((t) => t.startsWith('Tool'));
    expect(tools).toEqual([
      'ToolApprovalRequested:transfer', 'ToolApprovalResolved:transfer:denied', 'ToolExecutionStart:transfer', 'ToolExecutionEnd:transfer',
      'ToolExecutionStart:add', 'ToolExecutionEnd:add',
    ]);
    expect(results(all).t1!.text).toBe('Tool call "transfer" was denied.');
  });

  it('needs(call, tool) in the config asks for calls of tools that do not say so themselves', async () => {
    const all = await events(
      agentLoop([userMessage('add', 0)], context([addTool]), config([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 }, id: 'x' }] }, { text: 'ok' }], {
        approval: { needs: (call) => call.name === 'add', decide: (r) => ({ approved: (r.args as { a: number }).a < 10 }) },
      })),
    );
    expect(visible(all).filter((t) => t.startsWith('ToolApproval'))).toEqual(['ToolApprovalRequested:add', 'ToolApprovalResolved:add:approved']);
    expect(results(all).x).toEqual({ text: '2', isError: false });
  });

  it('a needsApproval predicate sees the arguments; one that throws is reported and asks anyway', async () => {
    const picky = defineTool({ ...{ name: 'pay', description: 'pays', parameters: z.object({ amount: z.number() }) }, needsApproval: (args) => args.amount > 10, execute: () => 'paid' });
    const thrower = defineTool({ name: 'odd', description: 'odd', parameters: z.object({}), needsApproval: () => { throw new Error('predicate broke'); }, execute: () => 'ran' });
    const script = [{ toolCalls: [{ name: 'pay', arguments: { amount: 5 }, id: 'small' }, { name: 'pay', arguments: { amount: 50 }, id: 'big' }, { name: 'odd', arguments: {}, id: 'o' }] }, { text: 'ok' }];
    const all = await events(agentLoop([userMessage('go', 0)], context([picky, thrower]), config(script, { approval: { decide: () => ({ approved: true }) } })));
    expect(all.filter((e) => e.type === 'ToolApprovalRequested').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(['big', 'o']);
    expect(all.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'needsApproval', message: 'predicate broke' });
  });

  it('a needsApproval predicate gets the arguments as the schema gives them back, typed as execute\'s', async () => {
    const seen: unknown[] = [];
    const priced = defineTool({
      name: 'pay', description: 'pays', parameters: z.object({ amount: z.coerce.number(), note: z.string().default('none') }),
      needsApproval: ({ amount, note }, call) => {
        seen.push({ amount, note, id: call.id });
        return amount > 10;
      },
      execute: ({ amount }) => `paid ${amount.toFixed(2)}`,
    });
    // @ts-expect-error the predicate's arguments are the schema's: no such field
    defineTool({ name: 'x', description: 'x', parameters: z.object({ amount: z.number() }), needsApproval: (args) => args.nope === 1, execute: () => 'x' });
    const script = [{ toolCalls: [{ name: 'pay', arguments: { amount: '5' }, id: 'small' }, { name: 'pay', arguments: { amount: '50' }, id: 'big' }] }, { text: 'ok' }];
    const all = await events(agentLoop([userMessage('go', 0)], context([priced]), config(script, { approval: { decide: () => ({ approved: true }) } })));
    expect(seen).toEqual([{ amount: 5, note: 'none', id: 'small' }, { amount: 50, note: 'none', id: 'big' }]);
    expect(all.filter((e) => e.type === 'ToolApprovalRequested').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(['big']);
  });

  it('a decide function that throws denies the call and reports a HookError', async () => {
    const all = await events(agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { approval: { decide: () => { throw new Error('policy down'); } } })));
    expect(all.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'approval.decide', message: 'policy down' });
    expect(results(all).t1).toEqual({ text: 'Tool call "transfer" was denied: the approval function failed: policy down', isError: true });
  });

  it('abort ends a pending approval cleanly: an aborted result, AgentEnd aborted, no hang', async () => {
    const controller = new AbortController();
    const answers = new Subject<ApprovalAnswer>();
    const run$ = agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { signal: controller.signal, approval: { answers } })).pipe(
      tap((e) => e.type === 'ToolApprovalRequested' && queueMicrotask(() => controller.abort())),
    );
    const all = await lastValueFrom(run$.pipe(toArray()));
    expect(results(all).t1).toEqual({ text: 'Tool execution aborted.', isError: true });
    expect(all.find((e) => e.type === 'ToolApprovalResolved')).toMatchObject({ approved: false, reason: 'aborted: the run was aborted' });
    expect(agentEnd(all).stopReason).toBe('aborted');
    expect(answers.observed).toBe(false);
  });

  it('an answer for another id, or a second answer, changes nothing', async () => {
    const answers = new Subject<ApprovalAnswer>();
    const run$ = agentLoop([userMessage('pay', 0)], context([guarded, addTool]), config(twoCalls, { approval: { answers } })).pipe(
      tap((e) => {
        if (e.type !== 'ToolApprovalRequested') return;
        answers.next({ toolCallId: 'nope', approved: true });
        answers.next({ toolCallId: 't1', approved: false, reason: 'no' });
        answers.next({ toolCallId: 't1', approved: true });
      }),
    );
    const all = await lastValueFrom(run$.pipe(toArray()));
    expect(results(all).t1!.text).toBe('Tool call "transfer" was denied: no');
    expect(all.filter((e) => e.type === 'ToolApprovalResolved')).toHaveLength(1);
  });

  it('fails before the run when a tool needs approval and nothing can answer, or the options are malformed', async () => {
    const start = (extra: object) => firstValueFrom(agentLoop([userMessage('pay', 0)], context([guarded]), config(twoCalls, extra)).pipe(filter(() => true)));
    await expect(start({})).rejects.toThrow(/config\.approval: context\.tools\[0\] "transfer" needs approval, but nothing can answer/);
    await expect(start({ approval: { decide: 'yes' } })).rejects.toThrow('config.approval.decide: expected a function, got the string "yes"');
    await expect(start({ approval: { answers: [1] } })).rejects.toThrow(/config\.approval\.answers: expected an Observable/);
    await expect(start({ approval: { decide: () => undefined }, cancelToolCalls: 'a1' })).rejects.toThrow(/config\.cancelToolCalls: expected an Observable/);
    await expect(start({ approval: { decide: () => undefined }, cancelToolCalls: 'a1' })).rejects.toBeInstanceOf(AgentError);
    expect(() => defineTool({ name: 'x', description: 'x', parameters: z.object({}), needsApproval: 'yes' as never, execute: () => '' })).toThrow(/needsApproval must be a boolean or a function/);
  });
});

describe('agentLoopContinue answers the calls a suspended run left open', () => {
  it('runs the open calls of the last assistant message first (approval included), then the model', async () => {
    const { agentLoopContinue, openToolCalls } = await import('../../src/index.js');
    const assistant = {
      role: 'assistant' as const, stopReason: 'toolUse' as const, model: 'm', provider: 'p', timestamp: 1,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      content: [{ type: 'toolCall' as const, id: 't1', name: 'transfer', arguments: { amount: 5 } }, { type: 'toolCall' as const, id: 'a1', name: 'add', arguments: { a: 1, b: 1 } }],
    };
    const answered = { role: 'toolResult' as const, toolCallId: 'a1', toolName: 'add', content: [{ type: 'text' as const, text: '2' }], isError: false, timestamp: 2 };
    const messages = [userMessage('pay', 0), assistant, answered] as AgentMessage[];
    expect(openToolCalls(messages)?.content.map((c) => (c as { id: string }).id)).toEqual(['t1']);
    expect(openToolCalls([userMessage('x', 0)])).toBeUndefined();
    const cfg = config([{ text: 'paid' }], { approval: { decide: () => ({ approved: true }) } });
    const all = await events(agentLoopContinue(context([guarded, addTool], messages), cfg));
    expect(visible(all).slice(0, 5)).toEqual(['AgentStart', 'ToolApprovalRequested:transfer', 'ToolApprovalResolved:transfer:approved', 'ToolExecutionStart:transfer', 'ToolExecutionEnd:transfer']);
    expect(results(all)).toEqual({ t1: { text: 'moved 5', isError: false } });
    expect(cfg.provider.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult']);
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('a new prompt on such a context also answers the open calls first, then adds the prompt', async () => {
    const assistant = {
      role: 'assistant' as const, stopReason: 'toolUse' as const, model: 'm', provider: 'p', timestamp: 1,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      content: [{ type: 'toolCall' as const, id: 'a1', name: 'add', arguments: { a: 2, b: 2 } }],
    };
    const cfg = config([{ text: 'ok' }]);
    const all = await events(agentLoop([userMessage('never mind', 5)], context([addTool], [userMessage('add', 0), assistant] as AgentMessage[]), cfg));
    expect(cfg.provider.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'user']);
    expect(results(all)).toEqual({ a1: { text: '4', isError: false } });
  });
});
