// phi-rx `agentLoop` over the scripted provider, consumed by subscribing.
import { contender } from './phi-common.mjs';

export const label = 'phi-rx agentLoop';

export const { run, runWith } = contender((c, workload, counts, tools) =>
  c.consume(c.phi.agentLoop(c.prompts(), c.context(tools), c.config(workload)), counts),
);
