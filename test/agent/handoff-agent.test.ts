import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, handoff, textOf, type AgentSpec, type AssistantMessage } from '../../src/index.js';
import { InMemorySessionStore, getLoop } from '../../src/session/index.js';
import { scriptedModel, scriptedProvider, type ScriptedTurn, type ScriptStep } from '../../src/testing/index.js';
import type { StreamRequest } from '../../src/types/provider.js';

const refund = defineTool({
  name: 'refund', description: 'Refunds an order', parameters: z.object({ order: z.string() }), needsApproval: true,
  execute: ({ order }) => `Refunded ${order}.`,
});
const refunds: AgentSpec = { name: 'refunds', systemPrompt: 'You refund orders.', tools: [refund] };
const billing: AgentSpec = { name: 'billing', systemPrompt: 'You answer billing questions.', tools: [handoff(refunds)] };
const prompts: string[] = [];
const seen = (turn: ScriptedTurn) => (request: StreamRequest) => {
  prompts.push(request.systemPrompt);
  return turn;
};
const triage = (script: ScriptStep[]) =>
  new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(script), retry: false, agentName: 'triage', systemPrompt: 'You route.', tools: [handoff(billing)], agentId: 'a1', sessionId: 's1' });

describe('BasicAgent with handoffs', () => {
  it('the next prompt goes to the agent that answered last; restore() brings it back from the session', async () => {
    prompts.length = 0;
    const agent = triage([
      seen({ toolCalls: [{ name: 'transfer_to_billing', arguments: {} }] }),
      seen({ text: 'Billing here.' }),
      seen({ text: 'Still billing.' }),
    ]);
    expect(agent.activeAgent).toBeUndefined();
    expect(await agent.run('A charge?')).toBe('Billing here.');
    expect(agent.activeAgent).toBe('billing');
    const second = await lastValueFrom(agent.prompt('And?').pipe(toArray()));
    expect(second[0]).toMatchObject({ type: 'AgentStart', agent: 'billing' });
    expect(prompts).toEqual(['You route.', 'You answer billing questions.', 'You answer billing questions.']);

    const store = new InMemorySessionStore();
    await agent.save(store);
    const loop = getLoop(await store.load('s1'), agent.lastLoopId!)!;
    expect(loop.events.find((e) => e.type === 'AgentEnd')).toMatchObject({ agent: 'billing' });
    const restored = triage([seen({ text: 'Billing again.' })]);
    await restored.restore(store, 's1');
    expect(restored.activeAgent).toBe('billing');
    expect(await restored.run('Hello?')).toBe('Billing again.');
    expect(prompts.at(-1)).toBe('You answer billing questions.');
    restored.reset();
    expect(restored.activeAgent).toBeUndefined();
  });

  it('handoff + approval after restore: a refunds call waiting for approval resumes in another agent object with refunds\' tools', async () => {
    const store = new InMemorySessionStore();
    const first = triage([
      { toolCalls: [{ name: 'transfer_to_billing', arguments: {} }] },
      { toolCalls: [{ name: 'transfer_to_refunds', arguments: {} }] },
      { toolCalls: [{ name: 'refund', arguments: { order: 'A-17' }, id: 'r1' }] },
    ]);
    const waiting = firstValueFrom(first.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')));
    const abandoned = first.prompt('Refund A-17').subscribe();
    await waiting;
    await first.save(store);
    abandoned.unsubscribe(); // the process goes away mid-run

    const second = triage([(request: StreamRequest) => ({ text: `${request.systemPrompt} ${textOf(request.messages.at(-1) as never)}` })]);
    await second.restore(store, 's1');
    expect(second.activeAgent).toBe('refunds');
    expect(second.pendingApprovals().map((p) => [p.toolCallId, p.toolName])).toEqual([['r1', 'refund']]);
    const events = await lastValueFrom(second.approve('r1', { approved: true }).pipe(toArray()));
    expect(events.find((e) => e.type === 'AgentStart')).toMatchObject({ agent: 'refunds' });
    expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop', agent: 'refunds' });
    expect(textOf(second.messages.at(-1) as AssistantMessage)).toBe('You refund orders. Refunded A-17.');
  });
});
