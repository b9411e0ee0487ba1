// TEMP experiment: agentLoop with one config shared by every agent (a stateless provider).
import { contender } from './phi-common.mjs';
import { modelParts } from '../workload.mjs';
export const label = 'tmp shared config';
const configs = new WeakMap();
function sharedConfig(c, workload) {
  let cfg = configs.get(c);
  if (cfg) return cfg;
  const phi = c.phi;
  const provider = (request) => new phi.Observable((subscriber) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    let ids = 0;
    const parts = modelParts(workload, turn, () => `call_${turn}_${++ids}`);
    const builder = new phi.AssistantMessageBuilder(request.model.id, request.model.provider, Date.now());
    (async () => {
      subscriber.next(builder.start());
      for await (const part of parts) {
        if (subscriber.closed) return;
        if (part.type === 'textDelta') subscriber.next(builder.text(part.delta));
        else if (part.type === 'toolStart') subscriber.next(builder.toolCallStart(part.id, part.name, part.id));
        else subscriber.next(builder.toolCallDelta(part.delta, part.id));
      }
      subscriber.next(builder.finish(builder.hasToolCalls() ? 'toolUse' : 'stop'));
      subscriber.complete();
    })().catch((error) => subscriber.error(error));
    return () => void parts.return(undefined);
  });
  cfg = { model: phi.scriptedModel(), provider };
  configs.set(c, cfg);
  return cfg;
}
export const { run, runWith } = contender((c, workload, counts, tools) =>
  c.consume(c.phi.agentLoop(c.prompts(), c.context(tools), sharedConfig(c, workload)), counts),
);
