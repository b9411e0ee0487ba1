// phi-rx `BasicAgent` (the stateful facade: queues, abort signal, ids, conversation), one agent per
// simulated user, its events consumed by subscribing to `prompt()`.
import { PROMPT, SYSTEM_PROMPT } from '../workload.mjs';
import { contender } from './phi-common.mjs';

export const label = 'phi-rx BasicAgent';

export const { run, runWith } = contender(async (c, workload, counts, tools) => {
  const agent = new c.phi.BasicAgent({ model: c.model, provider: c.provider(workload), systemPrompt: SYSTEM_PROMPT, tools });
  await c.consume(agent.prompt(PROMPT), counts);
  checkConversation(agent, workload);
});

/** The agent's conversation must hold every message of the run. */
export function checkConversation(agent, workload) {
  const expected = 1 + workload.turns + (workload.turns - 1) * workload.tools;
  if (agent.messages.length !== expected) throw new Error(`BasicAgent: expected ${expected} messages in the conversation, got ${agent.messages.length}`);
}
