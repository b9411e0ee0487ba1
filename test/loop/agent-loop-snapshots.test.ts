import { describe, expect, it } from 'vitest';
import { agentLoop, userMessage, type AgentEvent, type AssistantMessage } from '../../src/index.js';
import { context, config, events } from '../agent/helpers.js';

const updates = (all: AgentEvent[]) => all.filter((e): e is Extract<AgentEvent, { type: 'MessageUpdate' }> => e.type === 'MessageUpdate');
const textOf = (m: AssistantMessage) => m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('MessageUpdate carries snapshots, not a live view', () => {
  it('every update keeps showing the message as it was when it was emitted', async () => {
    const all = await events(agentLoop([userMessage('hi')], context(), config([{ text: 'Hello there, world', thinking: 'let me think' }])));
    const ups = updates(all);
    expect(ups.length).toBeGreaterThan(5);
    let text = '';
    let thinking = '';
    for (const u of ups) {
      if (u.delta.type === 'text') text += u.delta.delta;
      if (u.delta.type === 'thinking') thinking += u.delta.delta;
      // Read after the run has ended: a live view would show the final text here.
      expect(textOf(u.message as AssistantMessage)).toBe(text);
      const block = u.message.content.find((c) => c.type === 'thinking');
      expect(block && block.type === 'thinking' ? block.thinking : '').toBe(thinking);
    }
    expect(text).toBe('Hello there, world');
  });

  it('consecutive updates are different objects that share the blocks that did not change', async () => {
    const all = await events(agentLoop([userMessage('hi')], context(), config([{ text: 'Hello there', thinking: 'hmm' }])));
    const text = updates(all).filter((u) => u.delta.type === 'text');
    for (let i = 1; i < text.length; i++) {
      const [prev, next] = [text[i - 1]!.message, text[i]!.message];
      expect(next).not.toBe(prev);
      expect(next.content[0]).toBe(prev.content[0]); // the thinking block, unchanged
      expect(next.content[1]).not.toBe(prev.content[1]); // the text block, changed
    }
    const end = all.find((e) => e.type === 'MessageEnd' && e.message.role === 'assistant');
    expect(end && end.type === 'MessageEnd' ? textOf(end.message as AssistantMessage) : '').toBe('Hello there');
  });
});
