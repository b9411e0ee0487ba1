import { newCounts, runAgents } from '../workload.mjs';
import { consume, context, lookupTool, phi, prompts, provider } from './phi-common.mjs';
export const label = 'tmp';
const parts = (process.env.CFG ?? '').split(',');
export function run(workload) {
  const counts = newCounts();
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, () => {
    const config = { model: phi.scriptedModel(), provider: provider(workload) };
    if (parts.includes('signal')) config.signal = new AbortController().signal;
    if (parts.includes('steer')) config.steering = new phi.MessageQueue('oneAtATime');
    if (parts.includes('follow')) config.followUp = new phi.MessageQueue('oneAtATime');
    if (parts.includes('cancel')) config.cancelToolCalls = new phi.Subject();
    return consume(phi.agentLoop(prompts(), context(tools), config), counts);
  });
}
