// phi-rx `BasicAgent` (the stateful facade: queues, abort signal, ids, conversation), one agent per
// simulated user, its events consumed by subscribing to `prompt()`.
import { PROMPT, SYSTEM_PROMPT, newCounts, runAgents } from '../workload.mjs';
import { consume, lookupTool, phi, provider } from './phi-common.mjs';

export const label = 'phi-rx BasicAgent';

export function run(workload) {
  const counts = newCounts();
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const agent = new phi.BasicAgent({ model: phi.scriptedModel(), provider: provider(workload), systemPrompt: SYSTEM_PROMPT, tools });
    await consume(agent.prompt(PROMPT), counts);
    const expected = 1 + workload.turns + (workload.turns - 1) * workload.tools;
    if (agent.messages.length !== expected) throw new Error(`BasicAgent: expected ${expected} messages in the conversation, got ${agent.messages.length}`);
  });
}
