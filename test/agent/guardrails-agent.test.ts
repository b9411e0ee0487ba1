import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { BasicAgent, textOf, toolCalled, type AgentEvent } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { addTool } from './helpers.js';

const end = (all: AgentEvent[]) => all.find((e) => e.type === 'AgentEnd') as Extract<AgentEvent, { type: 'AgentEnd' }>;

describe('BasicAgent with guardrails and stopWhen', () => {
  it('a tripped prompt leaves the stop message in the conversation, and the next prompt runs as usual', async () => {
    const provider = scriptedProvider([{ text: 'Your order ships Monday.' }]);
    const agent = new BasicAgent({
      model: scriptedModel(), provider,
      guardrails: { input: [{ name: 'on-topic', mode: 'blocking', check: ({ prompts }) => ({ tripwire: JSON.stringify(prompts).includes('homework') }) }] },
    });
    const tripped = await lastValueFrom(agent.prompt('do my homework').pipe(toArray()));
    expect(end(tripped)).toMatchObject({ stopReason: 'guardRail', stoppedBy: { guardrail: 'on-topic' } });
    expect(provider.requests).toHaveLength(0); // blocking: the model was never asked
    const next = await lastValueFrom(agent.prompt('when does my order ship?').pipe(toArray()));
    expect(end(next).stopReason).toBe('stop');
    expect(agent.messages.map((m) => (m.role === 'assistant' ? textOf(m) : m.role))).toEqual(['user', '[Stopped by guardrail: on-topic]', 'user', 'Your order ships Monday.']);
  });

  it('stopWhen set on the agent holds for each of its runs', async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
    ]);
    const agent = new BasicAgent({ model: scriptedModel(), provider, tools: [addTool], stopWhen: toolCalled('add') });
    for (let i = 0; i < 2; i++) expect(end(await lastValueFrom(agent.prompt(`sum ${i}`).pipe(toArray())))).toMatchObject({ stopReason: 'userStop' });
    expect(provider.requests).toHaveLength(2);
  });
});
