import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentRunError, BasicAgent, InputVerdict, ProviderError, defineTool, runToEnd, subAgentTool, textStream, type AgentEndEvent,
} from '../../src/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import { addTool } from '../agent/helpers.js';

function agent(script: ScriptStep[]) {
  const provider = scriptedProvider(script, { chunkSize: 3 });
  return { agent: new BasicAgent({ model: scriptedModel(), provider, retry: false }), provider };
}

async function collect(chunks: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

describe('await agent.run(text)', () => {
  it('resolves the final answer\'s text, after tool turns', async () => {
    const { agent: a } = agent([{ text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 2, b: 2 } }] }, { text: 'It is 4.' }]);
    a.withTools(addTool);
    await expect(a.run('What is 2+2?')).resolves.toBe('It is 4.');
    expect(a.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });

  it('rejects with an AgentRunError naming the provider\'s error, and keeps the AgentEnd', async () => {
    const { agent: a } = agent([{ error: ProviderError.auth('401 Unauthorized: invalid x-api-key') }]);
    const error = await a.run('hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentRunError);
    expect((error as AgentRunError).message).toBe('The agent run failed: auth: 401 Unauthorized: invalid x-api-key');
    expect((error as AgentRunError).end).toMatchObject({ type: 'AgentEnd', stopReason: 'error' });
  });

  it('rejects when an input filter rejects the prompt', async () => {
    const { agent: a, provider } = agent([{ text: 'never' }]);
    a.withInputFilter(() => InputVerdict.reject('no secrets'));
    await expect(a.run('my password is hunter2')).rejects.toThrow('The prompt was rejected: no secrets');
    expect(provider.requests).toHaveLength(0);
  });

  it('runToEnd(agent.prompt(text)) still gives the AgentEnd, failures included, as a value', async () => {
    const { agent: a } = agent([{ error: ProviderError.auth('bad key') }]);
    const end: AgentEndEvent = await runToEnd(a.prompt('hi'));
    expect(end.stopReason).toBe('error');
  });
});

describe('for await (const chunk of agent.textStream(text))', () => {
  it('yields only the text deltas, of every turn', async () => {
    const { agent: a } = agent([{ thinking: 'hmm', text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'Three.' }]);
    a.withTools(addTool);
    const chunks = await collect(a.textStream('1+2?'));
    expect(chunks).toEqual(['Add', 'ing', '.', 'Thr', 'ee.']);
  });

  it('leaves a sub-agent\'s text out', async () => {
    const child = scriptedProvider([{ text: 'CHILD' }]);
    const { agent: a } = agent([{ toolCalls: [{ name: 'helper', arguments: { task: 'x' } }] }, { text: 'parent' }]);
    a.withTools(subAgentTool({ name: 'helper', description: 'helps', model: scriptedModel(), provider: child }));
    expect((await collect(a.textStream('go'))).join('')).toBe('parent');
    expect(child.requests).toHaveLength(1);
  });

  it('throws an AgentRunError when the run fails', async () => {
    const { agent: a } = agent([{ text: 'partial answer', errorAfter: 3, error: ProviderError.api('500 overloaded') }]);
    const chunks: string[] = [];
    const error = await (async () => {
      for await (const chunk of a.textStream('hi')) chunks.push(chunk);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentRunError);
    expect(String(error)).toContain('500 overloaded');
  });

  it('breaking out of the loop cancels the run', async () => {
    let executed = 0;
    const slow = defineTool({ name: 'slow', description: 's', parameters: z.object({}), execute: () => String(++executed) });
    // 1 ms between stream events, so the consumer sees the first chunk while the turn still streams.
    const { agent: a, provider } = agent([{ text: 'first turn', toolCalls: [{ name: 'slow' }], chunkDelay: 1 }, { text: 'second' }]);
    a.withTools(slow);
    for await (const chunk of textStream(a.prompt('go'))) {
      expect(chunk).toBe('fir');
      break;
    }
    expect(a.isStreaming).toBe(false);
    expect(executed).toBe(0);
    expect(provider.remaining).toBe(1);
  });
});
