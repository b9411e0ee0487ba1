import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentLoop, defineTool, handoff, textOf, userMessage, withoutToolCalls, type AgentEvent, type AgentSpec, type AssistantMessage, type EventOf,
} from '../../src/index.js';
import { scriptedModel, scriptedProvider, type ScriptedTurn } from '../../src/testing/index.js';
import type { StreamRequest } from '../../src/types/provider.js';
import { agentEnd, config, context, events } from './helpers.js';

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order',
  parameters: z.object({ order: z.string() }),
  execute: ({ order }) => `Refunded ${order}.`,
});
const refunds: AgentSpec = { name: 'refunds', description: 'issues refunds', systemPrompt: 'You issue refunds.', tools: [refund], temperature: 0.1 };
const billing: AgentSpec = { name: 'billing', systemPrompt: 'You answer billing questions.', tools: [handoff(refunds)], maxTokens: 300 };

/** A scripted turn that also checks which agent the request is for. */
const as = (systemPrompt: string, tools: string[], turn: ScriptedTurn) => (request: StreamRequest): ScriptedTurn => {
  expect({ systemPrompt: request.systemPrompt, tools: request.tools.map((t) => t.name) }).toEqual({ systemPrompt, tools });
  return turn;
};

const handoffs = (all: AgentEvent[]): EventOf<'Handoff'>[] => all.filter((e): e is EventOf<'Handoff'> => e.type === 'Handoff');

describe('handoff', () => {
  it('triage → billing → refunds: each turn is the active agent\'s (prompt, tools, settings), one loop, AgentEnd names the last', async () => {
    const cfg = config([
      as('You route customers.', ['transfer_to_billing'], { toolCalls: [{ name: 'transfer_to_billing', arguments: { reason: 'a charge' }, id: 'h1' }] }),
      as('You answer billing questions.', ['transfer_to_refunds'], { toolCalls: [{ name: 'transfer_to_refunds', arguments: {}, id: 'h2' }] }),
      as('You issue refunds.', ['refund'], { toolCalls: [{ name: 'refund', arguments: { order: 'A1' } }] }),
      as('You issue refunds.', ['refund'], { text: 'Refunded A1.' }),
    ], { agentName: 'triage' });
    const ctx = { ...context([handoff(billing)]), systemPrompt: 'You route customers.' };
    const all = await events(agentLoop([userMessage('I was charged twice for A1', 0)], ctx, cfg));

    expect(handoffs(all).map(({ from, to, toolCallId, toolName, arguments: args, turnIndex }) => ({ from, to, toolCallId, toolName, args, turnIndex }))).toEqual([
      { from: 'triage', to: 'billing', toolCallId: 'h1', toolName: 'transfer_to_billing', args: { reason: 'a charge' }, turnIndex: 1 },
      { from: 'billing', to: 'refunds', toolCallId: 'h2', toolName: 'transfer_to_refunds', args: {}, turnIndex: 2 },
    ]);
    // One loop: every event is the run's own, the Handoff after the turn that asked for it.
    expect(new Set(all.map((e) => ('loopId' in e ? e.loopId : '')))).toEqual(new Set(['session-1.scripted.1']));
    const types = all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type);
    expect(types.indexOf('Handoff')).toBe(types.indexOf('TurnEnd') + 1);
    expect(all[0]).toMatchObject({ type: 'AgentStart', agent: 'triage' });
    const end = agentEnd(all);
    expect(end).toMatchObject({ agent: 'refunds', stopReason: 'stop' });
    expect(textOf(end.messages.at(-1) as AssistantMessage)).toBe('Refunded A1.');
    // The handoff results the model reads, and each agent's settings on its requests.
    expect(end.messages.filter((m) => m.role === 'toolResult').map((m) => textOf(m as never))).toEqual(['Handed off to billing.', 'Handed off to refunds.', 'Refunded A1.']);
    expect(cfg.provider.requests.map((r) => [r.maxTokens, r.temperature])).toEqual([[undefined, undefined], [300, undefined], [undefined, 0.1], [undefined, 0.1]]);
    // The whole conversation goes along (no filter): refunds sees the triage call and its result.
    expect(cfg.provider.requests[2]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'toolResult']);
  });

  it('an agent with a model of its own runs on it, through its own provider', async () => {
    const other = scriptedProvider([{ text: 'Billing here.' }], { provider: 'other' });
    const own: AgentSpec = { name: 'billing', model: { ...scriptedModel('billing-model'), provider: 'other' }, provider: other };
    const cfg = config([{ toolCalls: [{ name: 'transfer_to_billing', arguments: {} }] }]);
    const end = agentEnd(await events(agentLoop([userMessage('hi', 0)], context([handoff(own)]), cfg)));
    expect(end).toMatchObject({ agent: 'billing', stopReason: 'stop' });
    expect(other.requests).toHaveLength(1);
    expect(other.requests[0]!.model.id).toBe('billing-model');
    expect(other.requests[0]!.systemPrompt).toBe('');
    expect(agentEnd(await events(agentLoop([userMessage('hi', 0)], context([]), config([{ text: 'x' }])))).agent).toBeUndefined();
  });

  it('inputFilter decides what the next agent sees (withoutToolCalls); AgentEnd.messages keeps everything; a filter that throws ends the run', async () => {
    const quiet = { ...refunds, tools: [] };
    const cfg = config([
      { text: 'Let me pass you on.', toolCalls: [{ name: 'to_refunds', arguments: {} }] },
      (request) => {
        expect(request.messages.map((m) => [m.role, textOf(m as never)])).toEqual([['user', 'refund A1']]);
        return { text: 'Done.' };
      },
    ]);
    const tool = handoff(quiet, { toolName: 'to_refunds', inputFilter: withoutToolCalls });
    const end = agentEnd(await events(agentLoop([userMessage('refund A1', 0)], context([tool]), cfg)));
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);

    const keepsAnswer = handoff(quiet, { inputFilter: ({ messages }) => messages.slice(0, 2) }); // ends with the model's answer
    const all = await events(agentLoop([userMessage('refund A1', 0)], context([keepsAnswer]), config([{ text: 'Passing on.', toolCalls: [{ name: 'transfer_to_refunds', arguments: {} }] }])));
    expect(all.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'handoff.inputFilter', message: expect.stringMatching(/^inputFilter of the handoff main → refunds failed, the run ends: the messages it keeps must end with one the next agent answers/) });
    expect(agentEnd(all)).toMatchObject({ stopReason: 'error', agent: 'refunds' });
  });

  it('a cycle is bounded by the run\'s limits; onHandoff sees the arguments, and one that throws turns the handoff down', async () => {
    const seen: unknown[] = [];
    const pong: AgentSpec = { name: 'pong', tools: [handoff({ name: 'ping' }, { onHandoff: (args) => void seen.push(args) })] }; // back to the run's own
    const bounce = { toolCalls: [{ name: 'transfer_to_pong', arguments: { reason: 'r' } }] };
    const back = { toolCalls: [{ name: 'transfer_to_ping', arguments: {} }] };
    const all = await events(agentLoop([userMessage('go', 0)], context([handoff(pong)]), config([bounce, back, bounce, back, bounce], { agentName: 'ping', limits: { maxTurns: 4 } })));
    expect(handoffs(all).map((h) => `${h.from}>${h.to}`)).toEqual(['ping>pong', 'pong>ping', 'ping>pong', 'pong>ping']);
    expect(agentEnd(all)).toMatchObject({ stopReason: 'maxTurns', agent: 'ping' });
    expect(seen).toEqual([{}, {}]);

    const refusing = handoff(billing, { onHandoff: () => Promise.reject(new Error('billing is closed')) });
    const denied = await events(agentLoop([userMessage('hi', 0)], context([refusing]), config([{ toolCalls: [{ name: 'transfer_to_billing', arguments: {} }] }, { text: 'Sorry.' }])));
    expect(handoffs(denied)).toEqual([]);
    expect(agentEnd(denied)).toMatchObject({ agent: 'main', stopReason: 'stop' });
    expect(textOf(agentEnd(denied).messages.find((m) => m.role === 'toolResult') as never)).toMatch(/billing is closed/);
  });

  it('bad input: two agents with one name, an unknown starting agent, an agent without a name', async () => {
    const twin = handoff({ name: 'billing', systemPrompt: 'another' }, { toolName: 'to_billing' });
    await expect(events(agentLoop('hi', context([handoff(billing), twin]), config([])))).rejects.toThrow(/handoffs: two different agents are named "billing"/);
    await expect(events(agentLoop('hi', { ...context([handoff(billing)]), agent: 'nobody' }, config([])))).rejects.toThrow(/context\.agent: no agent "nobody" in this run's handoffs \(agents: main, billing, refunds\)/);
    expect(() => handoff({ name: '' })).toThrow(/handoff: the agent needs a name/);
  });

  it('a run started with another active agent (context.agent) begins with it', async () => {
    const cfg = config([as('You issue refunds.', ['refund'], { text: 'Refunds here.' })]);
    const end = agentEnd(await events(agentLoop('again', { ...context([handoff(billing)]), agent: 'refunds' }, cfg)));
    expect(end.agent).toBe('refunds');
  });
});
