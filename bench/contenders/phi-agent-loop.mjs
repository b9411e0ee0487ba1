// phi-rx `agentLoop` over the scripted provider, consumed by subscribing.
import { newCounts, runAgents } from '../workload.mjs';
import * as common from './phi-common.mjs';

export const label = 'phi-rx agentLoop';

export function run(workload) {
  return runWith(common, workload);
}

/** The run over the bundle `c` was made for (`phiCommon`): `ab.mjs` runs two. */
export function runWith(c, workload) {
  const counts = newCounts();
  // The tool is defined once per process and shared by every run and agent, as a server would.
  const tools = [c.lookupTool(counts)];
  return runAgents(workload, counts, () =>
    c.consume(c.phi.agentLoop(c.prompts(), c.context(tools), { model: c.phi.scriptedModel(), provider: c.provider(workload) }), counts),
  );
}
