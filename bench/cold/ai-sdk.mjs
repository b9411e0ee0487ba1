// Cold start, the AI SDK: `import` of `ai` (and its mock model from `ai/test`), `streamText` of one
// answer of 10 deltas, to its text.
import { performance } from 'node:perf_hooks';
import { report } from './report.mjs';

const { streamText, simulateReadableStream } = await import('ai');
const { MockLanguageModelV3 } = await import('ai/test');
const imported = performance.now();
const chunks = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }];
for (let i = 0; i < 10; i++) chunks.push({ type: 'text-delta', id: 't', delta: 'abcd' });
chunks.push({ type: 'text-end', id: 't' }, {
  type: 'finish', finishReason: { unified: 'stop', raw: 'stop' },
  usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } },
});
const model = new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks }) }) });
const result = streamText({ model, system: 'Be brief.', prompt: 'Hi', maxRetries: 0 });
report(imported, await result.text);
