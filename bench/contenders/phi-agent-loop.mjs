// phi-rx `agentLoop` over the scripted provider, consumed by subscribing.
import { newCounts, runAgents } from '../workload.mjs';
import { consume, context, lookupTool, phi, prompts, provider } from './phi-common.mjs';

export const label = 'phi-rx agentLoop';

export function run(workload) {
  const counts = newCounts();
  // The tool is defined once per process and shared by every run and agent, as a server would.
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, () =>
    consume(phi.agentLoop(prompts(), context(tools), { model: phi.scriptedModel(), provider: provider(workload) }), counts),
  );
}
