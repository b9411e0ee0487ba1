// Cold start, phi-rx: `import` of the published bundle (dist/, `npm run build`), a BasicAgent with a
// provider streaming one answer of 10 deltas through AssistantMessageBuilder, to its AgentEnd.
import { performance } from 'node:perf_hooks';
import { report } from './report.mjs';

const { AssistantMessageBuilder, BasicAgent } = await import('../../dist/index.js');
const { Observable } = await import('rxjs');
const imported = performance.now();
const provider = (request) => new Observable((subscriber) => {
  const builder = new AssistantMessageBuilder(request.model.id, request.model.provider, Date.now());
  (async () => {
    subscriber.next(builder.start());
    for (let i = 0; i < 10; i++) {
      await undefined;
      subscriber.next(builder.text('abcd'));
    }
    subscriber.next(builder.finish('stop'));
    subscriber.complete();
  })();
});
const model = { id: 'cold', provider: 'cold', api: 'cold', contextWindow: 100_000, maxTokens: 1000 };
const agent = new BasicAgent({ model, provider, systemPrompt: 'Be brief.' });
report(imported, await agent.run('Hi'));
