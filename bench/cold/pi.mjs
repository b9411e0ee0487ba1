// Cold start, pi-agent-core: `import` of its Agent (and pi-ai's event stream), a stream function
// pushing one answer of 10 deltas, to the end of `agent.prompt`.
import { performance } from 'node:perf_hooks';
import { report } from './report.mjs';

const { Agent } = await import('@mariozechner/pi-agent-core');
const { createAssistantMessageEventStream } = await import('@mariozechner/pi-ai');
const imported = performance.now();
const MODEL = {
  id: 'cold', name: 'Cold', api: 'cold', provider: 'cold', baseUrl: '', reasoning: false, input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100_000, maxTokens: 1000,
};
const streamFn = (model) => {
  const stream = createAssistantMessageEventStream();
  const partial = {
    role: 'assistant', content: [], api: model.api, provider: model.provider, model: model.id, stopReason: 'stop', timestamp: Date.now(),
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  };
  (async () => {
    stream.push({ type: 'start', partial });
    const block = { type: 'text', text: '' };
    partial.content.push(block);
    stream.push({ type: 'text_start', contentIndex: 0, partial });
    for (let i = 0; i < 10; i++) {
      await undefined;
      block.text += 'abcd';
      stream.push({ type: 'text_delta', contentIndex: 0, delta: 'abcd', partial });
    }
    stream.push({ type: 'text_end', contentIndex: 0, content: block.text, partial });
    stream.push({ type: 'done', reason: 'stop', message: partial });
  })();
  return stream;
};
const agent = new Agent({ initialState: { systemPrompt: 'Be brief.', model: MODEL }, streamFn });
await agent.prompt('Hi');
const last = agent.state.messages.at(-1);
report(imported, last?.content?.[0]?.text);
