import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, agentTool, handoff, userMessage } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { config, context } from '../../agent/helpers.js';
import { otelHarness, tree } from './helpers.js';

let harness: ReturnType<typeof otelHarness> | undefined;
afterEach(async () => {
  await harness?.shutdown();
  harness = undefined;
});

describe('handoffs and agent tools in phi-rx/otel', () => {
  it('a handoff is a span in the run\'s and an event on invoke_agent, which names the agents; an agent tool\'s run nests under its call', async () => {
    harness = otelHarness();
    const lookup = agentTool({ name: 'lookup', model: scriptedModel('child'), provider: scriptedProvider([{ text: 'invoice 7: 40 EUR' }]) });
    const run$ = agentLoop([userMessage('invoice 7?', 0)], context([handoff({ name: 'billing', tools: [lookup] })]), config([
      { toolCalls: [{ name: 'transfer_to_billing', arguments: { reason: 'invoice' }, id: 'h1' }] },
      { toolCalls: [{ name: 'lookup', arguments: { task: 'invoice 7' }, id: 'k1' }] },
      { text: 'It was 40 EUR.' },
    ], { agentName: 'triage' }));
    await lastValueFrom(run$.pipe(harness.tracing.trace(), toArray()));

    // The handoff span and billing's first model call can start in the same millisecond: their order is the clock's.
    const lines = tree(harness.spans());
    expect(lines.indexOf('  handoff billing')).toBeGreaterThan(lines.indexOf('  execute_tool transfer_to_billing'));
    expect(lines.filter((l) => l !== '  handoff billing')).toEqual([
      'invoke_agent triage',
      '  chat scripted-model',
      '  execute_tool transfer_to_billing',
      '  chat scripted-model',
      '  execute_tool lookup',
      '    invoke_agent lookup',
      '      chat child',
      '  chat scripted-model',
    ]);
    const run = harness.one('invoke_agent triage');
    expect(run.attributes).toMatchObject({ 'phi_rx.agent': 'triage', 'phi_rx.agent.last': 'billing' });
    expect(run.events.map((e) => [e.name, e.attributes])).toEqual([['phi_rx.handoff', { 'phi_rx.handoff.from': 'triage', 'phi_rx.handoff.to': 'billing' }]]);
    expect(harness.one('handoff billing').attributes).toMatchObject({ 'phi_rx.handoff.from': 'triage', 'phi_rx.handoff.to': 'billing', 'gen_ai.tool.call.id': 'h1' });
  });
});
