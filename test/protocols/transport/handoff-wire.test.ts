/**
 * Handoffs and agent tools through phi-rx's own wire (encoder and rebuilder, as JSON): the Handoff
 * event and AgentEnd.agent cross intact, and a child run's events (nested by parentToolCallId) are
 * rebuilt per loop like the parent's.
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { agentLoop, agentTool, handoff, transcript, userMessage, type AgentEvent } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { createEventRebuilder, createWireEncoder } from '../../../src/protocols/transport/index.js';

const context = () => ({
  systemPrompt: '', messages: [], agentId: 'a', sessionId: 's', loopId: 's.cfg.1',
  tools: [
    handoff({ name: 'billing', tools: [agentTool({ name: 'lookup', model: scriptedModel('child'), provider: scriptedProvider([{ text: 'invoice 7: 40 EUR' }]) })] }),
  ],
});

describe('handoffs and agent tools on the wire', () => {
  it('the rebuilt stream equals the run: Handoff, AgentEnd.agent, the child loop\'s messages', async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'transfer_to_billing', arguments: { reason: 'invoice' } }] },
      { toolCalls: [{ name: 'lookup', arguments: { task: 'invoice 7' }, id: 'k1' }] },
      { text: 'Invoice 7 was 40 EUR.' },
    ]);
    const all = await lastValueFrom(agentLoop([userMessage('invoice 7?', 0)], context(), { model: scriptedModel(), provider, retry: false, agentName: 'triage' }).pipe(toArray()));
    const encode = createWireEncoder();
    const rebuild = createEventRebuilder();
    const received: AgentEvent[] = all.map((e) => rebuild(JSON.parse(JSON.stringify(encode(e)))));
    const whole = (events: AgentEvent[]) => JSON.parse(JSON.stringify(events.filter((e) => e.type !== 'MessageUpdate'))) as unknown; // (a rebuilt partial tool call parses its partial arguments)
    expect(whole(received)).toEqual(whole(all));
    expect(received.find((e) => e.type === 'Handoff')).toMatchObject({ from: 'triage', to: 'billing', arguments: { reason: 'invoice' } });
    expect(received.filter((e) => e.type === 'AgentStart').map((e) => (e.type === 'AgentStart' ? [e.agent, e.parentToolCallId] : []))).toEqual([['triage', undefined], [undefined, 'k1']]);
    // A client folding what it received sees the child's answer under the call, and who answered.
    const view = await lastValueFrom(from(received).pipe(transcript()));
    expect(view.agent).toBe('billing');
    expect(view.toolCalls.find((t) => t.id === 'k1')?.child?.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'invoice 7: 40 EUR' }] });
  });
});
