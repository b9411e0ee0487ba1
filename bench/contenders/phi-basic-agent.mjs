// phi-rx `BasicAgent` (the stateful facade: queues, abort signal, ids, conversation), one agent per
// simulated user, its events consumed by subscribing to `prompt()`.
import { PROMPT, SYSTEM_PROMPT, newCounts, runAgents } from '../workload.mjs';
import * as common from './phi-common.mjs';

export const label = 'phi-rx BasicAgent';

export function run(workload) {
  return runWith(common, workload);
}

/** The run over the bundle `c` was made for (`phiCommon`): `ab.mjs` runs two. */
export function runWith(c, workload) {
  const counts = newCounts();
  const tools = [c.lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const agent = new c.phi.BasicAgent({ model: c.phi.scriptedModel(), provider: c.provider(workload), systemPrompt: SYSTEM_PROMPT, tools });
    await c.consume(agent.prompt(PROMPT), counts);
    const expected = 1 + workload.turns + (workload.turns - 1) * workload.tools;
    if (agent.messages.length !== expected) throw new Error(`BasicAgent: expected ${expected} messages in the conversation, got ${agent.messages.length}`);
  });
}
