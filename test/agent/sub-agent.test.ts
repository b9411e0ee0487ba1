import { describe, expect, it } from 'vitest';
import { agentLoop, subAgentTool, textOf, userMessage, type AgentEvent } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, events, testScheduler } from './helpers.js';

describe('subAgentTool', () => {
  it('runs a child loop with its own ids, links parent and child, streams its text, returns its final text', async () => {
    const childEvents: AgentEvent[] = [];
    const child = subAgentTool({
      name: 'researcher',
      model: scriptedModel('child-model'),
      provider: scriptedProvider([{ toolCalls: [{ name: 'add', arguments: { a: 20, b: 22 } }] }, { text: 'The answer is 42.' }]),
      systemPrompt: 'Research.',
      tools: [addTool],
      onEvent: (e) => childEvents.push(e),
    });
    const parent = config([{ toolCalls: [{ name: 'researcher', arguments: { task: 'compute 20+22' } }] }, { text: 'Done: 42.' }]);
    const all = await events(agentLoop([userMessage('delegate', 0)], context([child]), parent));
    const start = childEvents[0] as Extract<AgentEvent, { type: 'AgentStart' }>;
    expect(start.parentLoopId).toBe('session-1.scripted.1');
    expect(start.sessionId).not.toBe('session-1');
    expect(start.loopId).toBe(`${start.sessionId}.sub.1`);
    expect(childEvents.find((e) => e.type === 'TurnStart')).toMatchObject({ triggeredBy: 'subAgent' });
    const end = all.find((e) => e.type === 'ToolExecutionEnd');
    expect(end).toMatchObject({ childLoopId: start.loopId, isError: false, result: { content: [{ text: 'The answer is 42.' }] } });
    const updates = all.filter((e) => e.type === 'ToolExecutionUpdate').map((e) => textOf((e as Extract<AgentEvent, { type: "ToolExecutionUpdate" }>).partialResult));
    expect(updates.at(-1)).toBe('The answer is 42.');
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('a missing task is an invalid-arguments result', async () => {
    const child = subAgentTool({ name: 'helper', model: scriptedModel(), provider: scriptedProvider([]) });
    const all = await events(agentLoop([userMessage('x', 0)], context([child]), config([{ toolCalls: [{ name: 'helper', arguments: {} }] }, { text: 'ok' }])));
    expect(textOf(agentEnd(all).messages.find((m) => m.role === 'toolResult') as never)).toMatch(/^Invalid arguments for tool "helper": arguments\.task/);
  });

  it('aborting the parent aborts the child', () => {
    testScheduler().run(({ cold, flush }) => {
      const controller = new AbortController();
      const childEvents: AgentEvent[] = [];
      const child = subAgentTool({ name: 'slow', model: scriptedModel(), provider: scriptedProvider([{ text: 'thinking hard', chunkDelay: 10 }]), onEvent: (e) => childEvents.push(e) });
      const all: AgentEvent[] = [];
      agentLoop([userMessage('x', 0)], context([child]), config([{ toolCalls: [{ name: 'slow', arguments: { task: 't' } }] }], { signal: controller.signal })).subscribe((e) => all.push(e));
      cold('25ms a').subscribe(() => controller.abort());
      flush();
      expect(childEvents.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'aborted' });
      expect(agentEnd(all).stopReason).toBe('aborted');
    });
  });
});
