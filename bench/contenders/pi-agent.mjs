// @mariozechner/pi-agent-core's stateful `Agent` (its transcript, queues and listeners), one per
// simulated user, over the same stream function as the pi-agent-core contender; events counted by a
// listener. The tool is defined once per process, as in the other contenders.
import { Agent } from '@mariozechner/pi-agent-core';
import { PROMPT, SYSTEM_PROMPT, newCounts, runAgents } from '../workload.mjs';
import { MODEL, convertToLlm, count, lookupTool, scriptedStream } from './pi-agent-core.mjs';

export const label = '@mariozechner/pi-agent-core Agent';

export function run(workload) {
  const counts = newCounts();
  const tools = [lookupTool(counts)];
  return runAgents(workload, counts, async () => {
    const agent = new Agent({ initialState: { systemPrompt: SYSTEM_PROMPT, model: MODEL, tools }, convertToLlm, streamFn: scriptedStream(workload) });
    agent.subscribe((event) => count(counts, event));
    await agent.prompt(PROMPT);
    const expected = 1 + workload.turns + (workload.turns - 1) * workload.tools;
    if (agent.state.messages.length !== expected) throw new Error(`pi Agent: expected ${expected} messages, got ${agent.state.messages.length}`);
  });
}
