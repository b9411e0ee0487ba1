/**
 * Handoffs and agent tools through the UI-protocol mappings: AG-UI (agUiEvents) and the AI SDK's UI
 * message stream (uiMessageChunks). The parent's text is the conversation's; a Handoff and a child
 * run's events travel as the protocol's custom events / data parts, nothing dropped.
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { agentLoop, agentTool, handoff, userMessage, type AgentEvent } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { agUiEvents } from '../../src/protocols/ag-ui/index.js';
import { uiMessageChunks } from '../../src/protocols/ai-sdk/to-ui-message-chunks.js';

const run = async (): Promise<AgentEvent[]> => {
  const lookup = agentTool({ name: 'lookup', model: scriptedModel('child'), provider: scriptedProvider([{ text: 'CHILD TEXT' }]) });
  const provider = scriptedProvider([
    { toolCalls: [{ name: 'transfer_to_billing', arguments: { reason: 'invoice' } }] },
    { toolCalls: [{ name: 'lookup', arguments: { task: 'invoice 7' }, id: 'k1' }] },
    { text: 'PARENT TEXT' },
  ]);
  const context = { systemPrompt: '', messages: [], agentId: 'a', sessionId: 's', loopId: 's.cfg.1', tools: [handoff({ name: 'billing', tools: [lookup] })] };
  return lastValueFrom(agentLoop([userMessage('invoice 7?', 0)], context, { model: scriptedModel(), provider, retry: false }).pipe(toArray()));
};

describe('handoffs and agent tools in the UI-protocol mappings', () => {
  it('AG-UI: the Handoff and the child\'s events are CUSTOM phi-rx:{type}; text messages are the parent\'s only', async () => {
    const all = await run();
    const ag = await lastValueFrom(from(all).pipe(agUiEvents(), toArray()));
    const custom = ag.filter((e) => e.type === 'CUSTOM').map((e) => (e as { name: string }).name);
    expect(custom).toContain('phi-rx:Handoff');
    expect(custom).toContain('phi-rx:AgentStart'); // the child's start, its run under the call
    const texts = ag.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => (e as { delta: string }).delta).join('');
    expect(texts).toContain('PARENT TEXT');
    expect(texts).not.toContain('CHILD TEXT');
    expect(ag.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
  });

  it('AI SDK UI message stream: the Handoff and the child\'s events are data-phi-* parts; text parts are the parent\'s only', async () => {
    const all = await run();
    const chunks = await lastValueFrom(from(all).pipe(uiMessageChunks(), toArray()));
    const types = chunks.map((c) => c.type);
    expect(types).toContain('data-phi-handoff');
    const text = chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta).join('');
    expect(text).toContain('PARENT TEXT');
    expect(text).not.toContain('CHILD TEXT');
  });
});
